"""The fast paths of Map and Dict reads (issue 27) and their fallbacks: str keys looked up by
their UTF-8 bytes, int keys by value, the per-wrapper caches of converted elements (the same
object on every read of an entry), and the reused items() tuple. Each path is checked against
what the general conversion gives, and every test leaves no ffikit object alive (conftest)."""
from __future__ import annotations

import gc
import sysconfig
import threading

import pytest

import ffikit
from ffikit import Dict, Map, String, _core

N = 200
KEYS = [f"key{i:07d}" for i in range(N)]  # 10 bytes: String objects in C
WORDS = [f"val{i:07d}" for i in range(N)]


@pytest.fixture(params=[Map, Dict], ids=["Map", "Dict"])
def kind(request):
    return request.param


def test_str_keys_of_every_form_are_found_by_bytes(kind):
    src = {"": 0, "short": 1, "a longer key": 2, "nul\0in the middle": 3, "é ü 中文 key": 4, b"short": 5}
    m = kind(src)
    for k, v in src.items():
        assert m[k] == v and m.get(k) == v and k in m
    assert m[String("a longer key")] == 2  # an ffikit.String key: its C object, the general path
    assert "nul" not in m and m.get("nul\0in the") is None  # bytes after a NUL count
    assert "missing" not in m and m.get("missing", 7) == 7
    with pytest.raises(KeyError, match="'missing'"):
        m["missing"]


def test_str_subclass_and_bool_keys_take_the_general_path(kind):
    class Sub(str):
        pass

    class Pairs:  # read through items(): keeps 1, True and 1.0 apart, as a dict would not
        def items(self):
            return [("abc", 1), (1, "one"), (True, "true"), (1.0, "float")]

    m = kind(Pairs())
    assert m[Sub("abc")] == 1 and Sub("abc") in m
    assert m[1] == "one" and m[True] == "true" and m[1.0] == "float"  # three keys, as in C
    assert 2 not in m and False not in m


def test_bad_keys_raise_as_the_general_conversion_does(kind):
    m = kind({1: 2, "k": 3})
    with pytest.raises(OverflowError, match="does not fit in a 64-bit signed integer"):
        m[2**70]
    with pytest.raises(OverflowError):
        2**70 in m
    with pytest.raises(UnicodeEncodeError):
        m["\ud800"]
    with pytest.raises(UnicodeEncodeError):
        "\ud800" in m
    assert m.get(-(2**63)) is None and m.get(2**63 - 1) is None


def test_int_keys_by_value(kind):
    m = kind({i: i * 3 for i in range(-5, N)})
    for i in range(-5, N):
        assert m[i] == i * 3 and i in m and m.get(i) == i * 3
    assert N not in m and m.get(N) is None


def test_map_reads_hand_out_one_object_per_entry():
    m = Map(dict(zip(KEYS, WORDS)) | {"f": 1.5, "big": 10**12})
    v = m[KEYS[7]]
    assert type(v) is String and v == WORDS[7]
    assert m[KEYS[7]] is v and m.get(KEYS[7]) is v  # the cached String
    assert m["big"] is m["big"] and m["f"] is m.get("f")
    keys = list(m)
    assert keys == KEYS + ["f", "big"] and all(type(k) is String for k in keys[:N])
    assert list(m)[3] is keys[3]  # iteration reuses the keys too
    assert [v for _, v in m.items()][7] is v
    assert list(m.values())[7] is v
    # a second wrapper of the same C Map has its own cache, with equal values
    m2 = ffikit.convert(m)
    assert m2[KEYS[7]] == v


def test_map_cache_survives_gc_and_cycles_through_a_string():
    m = Map(dict(zip(KEYS, WORDS)))
    v = m[KEYS[0]]
    v._ffikit_object = m  # a cycle: Map wrapper -> cache -> String -> Map wrapper
    del v, m
    gc.collect()  # tp_traverse sees the cache, tp_clear breaks the cycle; conftest checks no C object leaks


def test_map_iteration_walks_slots_through_the_cache_and_its_misses():
    # Map iterators read the wrapper's per-slot cache and ask C only for slots not cached yet
    # or not cacheable (None, bools, short str, containers): every mix gives dict's order.
    src = {KEYS[i]: WORDS[i] for i in range(20)}
    src |= {"s": None, 7: True, "t": [1, 2], KEYS[20]: {"in": 1}, 2.5: "short", 10**12: 3.25, b"b": b"v"}
    parts = {"keys": _core.MAP_KEYS, "values": _core.MAP_VALUES, "items": _core.MAP_ITEMS}
    for part, code in parts.items():
        m = Map(src)
        expect = Map(src)._list(code)  # the general path: ffk_map_collect and a conversion each
        for k in list(src)[::3]:  # a third of the slots cached before iterating
            m[k]
        assert list(getattr(m, part)()) == expect
        assert list(getattr(m, part)()) == expect  # now all cached
        assert [k for k in m] == Map(src)._list(_core.MAP_KEYS) == [k for k in src]
    m = Map(src)
    assert [k for k in m][0] is m.keys().__iter__().__next__()  # the cached key, from the cache
    assert list(m.values())[0] is m[KEYS[0]]


def test_map_iterators_are_independent_and_stay_exhausted():
    m = Map(dict(zip(KEYS, WORDS)))
    a, b = iter(m), iter(m.items())
    assert next(a) == KEYS[0] and next(a) == KEYS[1]
    assert next(b) == (KEYS[0], WORDS[0])  # its own position
    assert list(a) == KEYS[2:] and [k for k, _ in b] == KEYS[1:]
    with pytest.raises(StopIteration):
        next(a)
    with pytest.raises(StopIteration):
        next(a)
    assert list(iter(Map({}))) == [] and list(Map({}).items()) == []
    assert a.__length_hint__() == 0


def test_map_iteration_of_a_map_changed_through_another_handle(testing):
    # C changes a Map shared with the wrapper on a copy (copy-on-write): the wrapper's slots,
    # cache and iterators keep the Map they hold.
    m = Map(dict(zip(KEYS[:10], range(10))))
    list(m.items())
    it = iter(m)
    next(it)
    changed = testing.mutate(m, KEYS[0], 99)
    assert changed[KEYS[0]] == 99 and m[KEYS[0]] == 0
    assert list(it) == KEYS[1:10] and list(m.values()) == list(range(10))
    del changed, it


def test_dict_reads_reuse_the_string_while_the_entry_is_unchanged():
    d = Dict(dict(zip(KEYS, WORDS)))
    v = d[KEYS[3]]
    assert type(v) is String and d[KEYS[3]] is v and d.get(KEYS[3]) is v
    d[KEYS[3]] = "another value, long"
    w = d[KEYS[3]]
    assert w == "another value, long" and w is not v and v == WORDS[3]
    keys = list(d)
    assert keys == KEYS and list(d) == keys  # the cache may or may not still hold each one
    d.clear()  # drops the cache: the Strings that left go with their last Python reference
    assert len(d) == 0 and d.get(KEYS[3]) is None
    del keys, v, w


def test_dict_cache_after_erase_and_growth():
    d = Dict()
    d["a key of length"] = "a value of length 1"
    first = d["a key of length"]
    for i in range(1000):  # grows far past the cache's first size: entries share cache slots
        d[f"key number {i:05d}"] = f"value number {i:05d}"
    assert d["a key of length"] == first
    for i in range(0, 1000, 2):
        del d[f"key number {i:05d}"]
    assert [d[f"key number {i:05d}"] for i in range(1, 1000, 2)] == [f"value number {i:05d}" for i in range(1, 1000, 2)]
    assert len(list(d.items())) == 501


def test_items_tuple_is_reused_only_when_nobody_holds_it(kind):
    m = kind(dict(zip(KEYS, WORDS)))
    held = list(m.items())  # every tuple held: none reused
    assert len({id(t) for t in held}) == N
    assert held[5] == (KEYS[5], WORDS[5])
    it = iter(m.items())
    a = next(it)
    ida = id(a)
    del a
    b = next(it)  # the first tuple, refilled (not on free-threaded builds)
    if not sysconfig.get_config_var("Py_GIL_DISABLED"):
        assert id(b) == ida
    assert b == (KEYS[1], WORDS[1])
    c = next(it)
    assert b == (KEYS[1], WORDS[1]) and c == (KEYS[2], WORDS[2])  # b is held: c is a new tuple
    assert [k for k, _ in it] == KEYS[3:]


def test_items_tuple_kept_is_the_first_and_comes_back_when_freed(kind):
    # As CPython's dict items iterator: the iterator keeps its first tuple; a step that finds
    # it held makes a new one it does not keep, so `for t in m.items()` (t holds the last
    # tuple) reuses the kept one every other step. Values stay right whatever is held.
    m = kind(dict(zip(KEYS, WORDS)))
    it = iter(m.items())
    first = next(it)
    kept = id(first)
    t = first
    seen = [t]
    for i in range(1, 6):
        t = next(it)  # the previous tuple is still held by `t` while the next is made
        seen.append(t)
        assert t == (KEYS[i], WORDS[i])
    assert [x for x in seen] == [(KEYS[i], WORDS[i]) for i in range(6)]  # held ones never refilled
    del first, seen, t
    if not sysconfig.get_config_var("Py_GIL_DISABLED"):
        assert id(next(it)) == kept  # free again: refilled
        ids = set()
        for i, t in enumerate(it):
            ids.add(id(t))
            assert t == (KEYS[7 + i], WORDS[7 + i])
        assert kept in ids and len(ids) < N // 2  # the kept tuple, every other step
    m = kind({"a long key 1": 1})
    assert [t for t in m.items()] == [("a long key 1", 1)]


def test_items_tuple_reuse_keeps_gc_tracking_right(kind):
    m = kind({"a long key 1": [1, 2], "a long key 2": 5})
    it = iter(m.items())
    t = next(it)
    del t
    gc.collect()  # may untrack a tuple of untracked items
    t = next(it)
    assert t == ("a long key 2", 5)
    del t, it


def test_dict_iteration_reports_changes(kind):
    if kind is Map:
        pytest.skip("a Map never changes")
    d = Dict(dict(zip(KEYS, WORDS)))
    with pytest.raises(RuntimeError, match="Dict changed during iteration"):
        for k, _ in d.items():
            d[k + "x"] = 1


def test_readers_race_writers_on_a_dict():
    d = Dict({k: i for i, k in enumerate(KEYS)})
    stop = threading.Event()
    errors = []

    def write():
        for r in range(30):
            for i, k in enumerate(KEYS):
                d[k] = i
                if i % 3 == 0:
                    del d[k]
            d.clear()
        stop.set()

    def read():
        while not stop.is_set():
            for i in range(0, N, 7):
                v = d.get(KEYS[i])
                if v is not None and v != i:
                    errors.append((KEYS[i], v))
                KEYS[i] in d

    threads = [threading.Thread(target=write)] + [threading.Thread(target=read) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_map_reads_from_threads_agree():
    m = Map(dict(zip(KEYS, WORDS)))
    seen: list[list[object]] = [[] for _ in range(4)]

    def read(t):
        seen[t] = [m[k] for k in KEYS]

    threads = [threading.Thread(target=read, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for t in range(1, 4):  # every thread got the one cached String per entry
        assert all(a is b for a, b in zip(seen[0], seen[t]))


# ---- The key cache (container.h: ffkpy_KeySlot): what a str key object found last time ----


def test_key_cache_follows_every_change_of_a_dict(testing):
    # Each read below follows a change of a different kind, made through this wrapper,
    # through C (testing.mutate: another handle, the GIL released) or by clearing: a value
    # or a miss the key cache kept must never be handed out once the Dict has changed.
    d = Dict({KEYS[0]: 0, KEYS[1]: 1})
    k, other, absent = KEYS[0], KEYS[1], "a key that is not there"
    assert d[k] == 0 and d.get(k) == 0 and d[k] is d[k]  # an int value: one object while unchanged
    assert d.get(absent) is None and absent not in d  # a miss, kept too
    d[k] = 10
    assert d[k] == 10 and d.get(k) == 10
    testing.mutate(d, k, 20)
    assert d[k] == 20 and d.get(k) == 20 and k in d
    testing.mutate(d, absent, 5)
    assert d.get(absent) == 5 and absent in d and d[absent] == 5
    del d[absent]
    assert d.get(absent) is None and absent not in d
    d.update({k: 30})
    assert d[k] == 30
    assert d.pop(k) == 30
    assert d.get(k) is None and k not in d
    with pytest.raises(KeyError):
        d[k]
    assert d.setdefault(k, 40) == 40 and d[k] == 40
    d[other] = 1.5
    assert d[other] == 1.5 and d.get(other) is d.get(other)
    d.clear()
    assert d.get(k) is None and d.get(other) is None and len(d) == 0
    d[k] = "a long string value"
    assert d[k] == "a long string value" and type(d[k]) is String


def test_key_cache_takes_equal_keys_that_are_other_objects(kind):
    m = kind(dict(zip(KEYS, range(N))))
    same = "".join(["key", "0000003"])  # equal to KEYS[3], another object
    assert same is not KEYS[3]
    assert m[KEYS[3]] == 3 and m[same] == 3 and m[KEYS[3]] == 3 and m.get(same) == 3
    assert m.get("".join(["no", "such key"])) is None and m.get("nosuch key") is None
    many = [f"miss{i:06d}" for i in range(5000)]  # more keys than the cache has entries
    assert all(m.get(x) is None for x in many) and all(m[x] == i for i, x in enumerate(KEYS))
    assert all(x not in m for x in many) and all(x in m for x in KEYS)


def test_key_cache_of_values_that_are_objects_reads_them_afresh():
    inner = Map({"a": 1})
    d = Dict({"the inner map": inner})
    assert d["the inner map"] == inner and d.get("the inner map") == inner
    d["the inner map"] = Map({"a": 2})
    assert d["the inner map"]["a"] == 2
    m = Map({"the inner map": inner, "the list": [1, 2]})
    assert m["the inner map"] == inner and list(m["the list"]) == [1, 2] and m.get("the list") == m["the list"]
    del inner


def test_key_cache_is_dropped_with_the_wrapper_and_by_gc():
    d = Dict(dict(zip(KEYS, WORDS)))
    values = [d[k] for k in KEYS] + [d.get(k) for k in KEYS]
    assert values[:N] == WORDS
    s = d[KEYS[0]]
    s._ffikit_object = d  # a String the key cache keeps, holding its Dict wrapper: a cycle for the GC
    del d, values, s
    gc.collect()  # conftest then checks that no ffikit object is left


def test_key_cache_is_never_stale_with_writers_in_other_threads(testing):
    # A writer stores 1, 2, 3, ... under one key, half of the time through C with the GIL
    # released (testing.mutate), and then publishes the number; readers that saw a number
    # published must never read an older value (the key cache serves a value only while the
    # Dict's stamp is the one it was read at).
    k, writes = "the shared key", 10000
    d = Dict({k: 0})
    published = [0]
    stale: list[tuple[int, object]] = []
    done = threading.Event()

    def write():
        for i in range(1, writes + 1):
            if i % 2:
                d[k] = i
            else:
                testing.mutate(d, k, i)
            published[0] = i
        done.set()

    def read():
        while not done.is_set():
            floor = published[0]
            for v in (d[k], d.get(k)):
                if v < floor:
                    stale.append((floor, v))

    threads = [threading.Thread(target=write)] + [threading.Thread(target=read) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not stale
    assert d[k] == writes


# ---- Building from a dict: long str keys made together (ffk_any_str_many), one pass ----


def test_build_from_a_dict_of_every_kind_of_key(kind):
    class Sub(str):
        pass

    src = {"": 0, "short": 1, "a longer key": 2, "nul\0in the middle of it": 3, "é ü 中文 key, long": 4, b"bytes key": 5,
           7: 6, 2**40: 7, 1.5: 8, True: 9, Sub("a str subclass key"): 10, None: 11, (1, "a tuple key"): 12}
    m = kind(src)
    assert len(m) == len(src)
    for k, v in src.items():
        if isinstance(k, tuple):
            continue  # a tuple key becomes an Array, found by identity only
        assert m[k] == v, k
    assert list(m)[:5] == ["", "short", "a longer key", "nul\0in the middle of it", "é ü 中文 key, long"]
    big = {f"key{i:07d}": i for i in range(5000)}
    assert kind(big) == kind(big) and dict(kind(big).items()) == big


def test_build_from_a_dict_that_fails_midway_leaves_nothing_alive(kind):
    class Bad:
        pass

    src = {f"a long key number {i}": i for i in range(100)}
    src["the bad one, long"] = Bad()  # an Opaque: converts; the failures below do not
    src["surrogate value"] = "\ud800"
    with pytest.raises(UnicodeEncodeError):
        kind(src)
    src = {f"a long key number {i}": i for i in range(100)}
    src["\udc80 a surrogate key"] = 1
    with pytest.raises(UnicodeEncodeError):
        kind(src)
    src = {f"a long key number {i}": i for i in range(100)}
    src[f"a long key number {2**70}"] = 2**70  # too large an int
    with pytest.raises(OverflowError):
        kind(src)
    gc.collect()  # conftest checks that no ffikit object is left


def test_keys_of_a_built_map_outlive_it():
    m = Map({f"a long key number {i}": i for i in range(50)})
    keys = list(m.keys())  # Strings of one block: kept alive by these, whatever goes first
    del m
    gc.collect()
    assert keys[49] == "a long key number 49"
    del keys[::2]
    assert [str(k) for k in keys] == [f"a long key number {i}" for i in range(1, 50, 2)]
