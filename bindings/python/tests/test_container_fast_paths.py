"""The fast paths of ffikit.Array and ffikit.List (issue 27), each beside its fallback.

- Array reads go through a per-wrapper cache of the Python objects its scalar elements
  (int, float, str, bytes) became: the same object comes back, values never change, and
  the cache goes away with the wrapper. Other elements (containers, None, bool) convert
  as before.
- Building from a list or tuple reads exact ints and floats in the converter's loop;
  everything else (bool, int subclasses, numbers.Integral, big ints) takes the general
  path, and a list changed by a conversion's Python code is an error, not a crash.
- `in` and index() compare ints and strs in one C scan (a List's under its lock) and
  walk containers structurally; 1, True and 1.0 stay different.
"""
from __future__ import annotations

import enum
import gc
import sys
import threading
import weakref

import pytest

import ffikit
from ffikit import Array, List


# ---- Array element cache -------------------------------------------------------------


def test_array_reads_give_the_same_object_for_scalars():
    big = [10**12 + i for i in range(5)]
    a = Array(big + [1.5, "short", "a str long enough to be an object", b"bytes long enough here"])
    assert a[0] == big[0] and a[-1] == b"bytes long enough here"
    for i in range(len(a)):
        assert a[i] is a[i], i  # the second read is the cached object
        assert a[i] is a[i - len(a)]  # negative indices share the slot
    assert list(a) == [a[i] for i in range(len(a))]
    assert all(x is y for x, y in zip(a, [a[i] for i in range(len(a))]))
    assert isinstance(a[7], ffikit.String) and a[7] == "a str long enough to be an object"
    assert [x for x in reversed(a)] == list(a)[::-1]


def test_array_iteration_fills_the_cache_and_agrees_with_indexing():
    values = list(range(-500, 1500, 7))
    a = Array(values)
    first = list(a)  # fills the cache
    assert first == values
    assert all(x is y for x, y in zip(a, first))
    assert list(a) == values and list(reversed(a)) == values[::-1]


def test_array_non_scalar_elements_are_not_cached():
    a = Array([[1, 2], None, True, False, {"k": 1}])
    assert a[0] == [1, 2] and a[0] is not a[0]  # a fresh wrapper each read, as before
    assert a[1] is None and a[2] is True and a[3] is False
    assert a[4]["k"] == 1


def test_array_cache_references_go_away_with_the_wrapper():
    x = 10**15 + 1
    a = Array([x] * 3)
    got = a[1]
    n = sys.getrefcount(got)
    same = a[1] is got
    after_read = sys.getrefcount(got)  # (pytest's assert rewriting would hold temporaries)
    assert same and after_read == n  # the read's reference was the caller's
    r = weakref.ref(a)
    del a
    gc.collect()
    assert r() is None
    after_del = sys.getrefcount(got)
    assert after_del == n - 1  # the cache's reference was released


def test_array_cache_is_per_wrapper_and_copies_share_the_object():
    a = Array([10**13, 2.5])
    b = Array(a)  # copy-on-write: the same C Array, another wrapper
    assert b[0] == a[0] and b is not a
    assert Array.__add__(a, [3])[2] == 3
    assert a[0:2] == [10**13, 2.5]  # slices convert, as before


def test_array_reads_from_many_threads_agree():
    a = Array(list(range(10**9, 10**9 + 2000)))
    seen: list[list[int]] = []

    def read():
        seen.append([a[i] for i in range(len(a))])

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in seen:
        assert s == list(range(10**9, 10**9 + 2000))
    assert all(a[i] is a[i] for i in range(0, 2000, 97))


# ---- Building from a list or tuple ---------------------------------------------------


class Color(enum.IntEnum):
    RED = 3


def test_build_reads_ints_and_floats_in_one_pass_and_others_as_before():
    values = [0, 1, -1, 2**30, -(2**30), 2**31 + 5, -(2**62), 2**63 - 1, -(2**63), 1.25, float("inf")]
    for make in (Array, List):
        assert list(make(values)) == values
        assert list(make(tuple(values))) == values
    mixed = [True, Color.RED, 2.0, 2, "s", None]
    a = Array(mixed)
    assert a[0] is True and type(a[1]) is int and a[1] == 3 and a[2] == 2.0 and a[3] == 2
    assert 2 in a and a.index(2) == 3  # 2.0 is not 2
    l = List(mixed)
    assert l[0] is True and l.index(2) == 3


def test_build_refuses_ints_beyond_64_bits_and_leaks_nothing():
    for make in (Array, List):
        with pytest.raises(OverflowError, match="64-bit"):
            make([1, 2, "a str long enough to be an object", 2**63])
        with pytest.raises(OverflowError):
            make((-(2**63) - 1,))


class Shrinks:
    """A numbers.Integral whose __index__ empties the list being converted."""

    def __init__(self, victim: list) -> None:
        self.victim = victim

    def __index__(self) -> int:
        self.victim.clear()
        return 1

    __int__ = __index__


import numbers  # noqa: E402

numbers.Integral.register(Shrinks)


def test_build_from_a_list_that_shrinks_during_conversion_is_an_error():
    for make in (Array, List):
        victim: list = [1]
        victim[:] = [1, Shrinks(victim), 3, 4, "a str long enough to be an object"]
        with pytest.raises(RuntimeError, match="changed size"):
            make(victim)


# ---- `in` and index ------------------------------------------------------------------


@pytest.mark.parametrize("make", [Array, List])
def test_in_and_index_compare_leaves_in_one_scan_and_containers_structurally(make):
    s = make([1, True, 1.0, "abc", "a str long enough to be an object", b"a str long enough to be an object",
              [1, 2], 1])
    assert s.index(1) == 0 and s.index(True) == 1 and s.index(1.0) == 2
    assert s.index("abc") == 3
    assert s.index("a str long enough to be an object") == 4
    assert s.index(b"a str long enough to be an object") == 5  # bytes never equal str
    assert s.index([1, 2]) == 6 and (1, 2) in s and Array([1, 2]) in s
    assert s.index(1, 1) == 7 and s.index(1, -1) == 7
    with pytest.raises(ValueError):
        s.index(1, 1, 7)
    with pytest.raises(ValueError):
        s.index(1, 8, 2)
    assert s.index(1, -100, 1) == 0
    assert 2 not in s and "ab" not in s and 2**70 not in s and object() not in s
    assert s.count(1) == 2 and s.count([1, 2]) == 1


def test_list_in_while_another_thread_appends_and_clears():
    l = List()
    stop = threading.Event()
    errors: list[BaseException] = []

    def write():
        try:
            for _ in range(200):
                l.extend(range(300))
                l.append("a str long enough to be an object")
                del l[:50]
                l.clear()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
        finally:
            stop.set()

    t = threading.Thread(target=write)
    t.start()
    while not stop.is_set():
        assert (299 in l) in (True, False)
        assert ("a str long enough to be an object" in l) in (True, False)
        assert ([1] in l) is False
    t.join()
    assert not errors
    assert len(l) == 0


# ---- List reads ------------------------------------------------------------------------


def test_list_reads_of_plain_and_object_elements():
    l = List([10**12, 2.5, None, True, "a str long enough to be an object", [1]])
    assert l[0] == 10**12 and l[1] == 2.5 and l[2] is None and l[3] is True
    assert isinstance(l[4], ffikit.String) and l[5] == [1]
    assert list(l) == [10**12, 2.5, None, True, "a str long enough to be an object", [1]]
    l[0] = 7
    assert l[0] == 7  # no cache: a List is shared and mutable


# ---- List element cache (checked against the List's stamp on every use) --------------


def test_list_reads_reuse_objects_until_any_handle_changes_the_list():
    values = [10**12 + i for i in range(6)]
    l = List(values)
    other = Array([l])[0]  # another wrapper of the same C List
    assert other is not l and other == l
    first = l[2]
    assert l[2] is first  # cached while nothing changed
    other[2] = 10**13  # a change through the other handle moves the stamp
    assert l[2] == 10**13
    assert l[2] is l[2]
    other.append(5)
    assert l[2] == 10**13 and l[-1] == 5 and len(l) == 7
    other.clear()
    with pytest.raises(IndexError):
        l[2]
    other.extend([1.5, "a str long enough to be an object", 7])
    assert [l[0], l[1], l[2]] == [1.5, "a str long enough to be an object", 7]
    assert l[1] is l[1] and isinstance(l[1], ffikit.String)


def test_list_subscript_fast_path_and_every_fallback():
    # l[i] answers a cached, current one-digit exact int index in list_subscript itself; any
    # other key (negative, big, int subclass, bool, index(), slice) and any miss takes the
    # general path, with the same results and errors as before.
    class Idx:
        def __index__(self):
            return 3

    class SubInt(int):
        pass

    values = [10**12 + i for i in range(8)]
    l = List(values)
    first = l[3]  # a miss: fills slot 3
    assert l[3] is first and l[SubInt(3)] is first and l[Idx()] is first  # the fallbacks see the cache too
    assert l[-5] == values[3] and l[True] == values[1] and l[0] == values[0]
    assert l[1:4] == values[1:4] and l[::-1] == values[::-1]
    assert l[2**40 % 7] == values[2**40 % 7]
    for bad in (8, -9, 2**31, -(2**31)):
        with pytest.raises(IndexError):
            l[bad]
    with pytest.raises(OverflowError):  # as main gives it (read_index)
        l[2**70]
    with pytest.raises(TypeError):
        l["3"]
    with pytest.raises(TypeError):
        l[1.0]
    l[3] = 5  # the stamp moves: the slot is stale, the next read is a miss and refills it
    assert l[3] == 5 and l[3] is l[3]
    del l[0]  # a change of shape: every slot is stale
    assert l[3] == values[4] and [l[i] for i in range(7)] == values[1:3] + [5] + values[4:]
    empty = List([])
    with pytest.raises(IndexError):
        empty[0]


def test_list_iteration_uses_the_cache_and_still_sees_every_change():
    l = List(range(10**9, 10**9 + 50))
    assert list(l) == list(range(10**9, 10**9 + 50))  # fills the cache
    cached = list(l)
    assert all(x is y for x, y in zip(cached, l))
    it = iter(l)
    assert next(it) == 10**9
    l[1] = -1  # a set is seen, as before
    assert next(it) == -1
    assert next(it) == 10**9 + 2
    l.append(0)  # a change of shape is reported, cached slots or not
    with pytest.raises(RuntimeError, match="changed during iteration"):
        next(it)
    it = iter(l)
    next(it)
    del l[0]
    with pytest.raises(RuntimeError, match="changed during iteration"):
        next(it)


def test_list_cache_references_go_away_with_the_wrapper_and_with_replacement():
    l = List([10**15 + 3, 2.5])
    got = l[0]
    n = sys.getrefcount(got)
    l[0] = 1  # the stale slot keeps its object until the next read of index 0
    assert l[0] == 1
    after_read = sys.getrefcount(got)
    assert after_read == n - 1  # replaced in the cache: only our reference is left
    got2 = l[1]
    m = sys.getrefcount(got2)
    r = weakref.ref(l)
    del l
    gc.collect()
    assert r() is None
    after_del = sys.getrefcount(got2)
    assert after_del == m - 1


def test_list_reads_while_another_thread_changes_it_outside_the_gil():
    l = List([0] * 8)
    big = list(range(5000))  # extend of a List this large releases the GIL in C
    stop = threading.Event()
    errors: list[BaseException] = []

    def write():
        try:
            for k in range(200):
                l[0] = k
                l.extend(List(big))
                del l[8:]
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
        finally:
            stop.set()

    t = threading.Thread(target=write)
    t.start()
    last = -1
    while not stop.is_set():
        x = l[0]
        assert isinstance(x, int) and 0 <= x < 200
        assert x >= last  # never an older value than one already read
        last = x
        for y in l[1:8]:
            assert y == 0
    t.join()
    assert not errors
    assert l[0] == 199 and len(l) == 8


def test_elements_beyond_the_cache_bound_convert_every_time():
    n = 70_000  # more than the 65,536 elements a wrapper caches
    values = list(range(10**12, 10**12 + n))
    for make in (Array, List):
        s = make(values)
        assert s[10] is s[10]  # below the bound: cached
        assert s[n - 1] == values[-1] and s[n - 1] is not s[n - 1]  # beyond it: a new object each read
        assert s[-1] == values[-1]
        assert list(s) == values
        assert sum(1 for x, y in zip(s, s) if x is y) == 65_536
