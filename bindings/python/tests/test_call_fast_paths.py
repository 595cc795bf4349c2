"""Function calls take a fast path when every argument is plain (None, an exact bool, an
int of one CPython digit, an exact float, an ffikit wrapper that lends no exchange table):
no temps, no tensor exchange state. Any other argument sends the whole call through the
converting path. Each test checks both paths give the same values, errors and ownership;
the suite's fixture checks that no ffikit object outlives a test."""
from __future__ import annotations

import enum
import sys

import numpy as np
import pytest

import ffikit
from ffikit import testing

DIGIT = 2**30 if sys.int_info.bits_per_digit == 30 else 2**15  # the first int of two digits
PLAIN = [None, True, False, 0, 1, -1, 7, DIGIT - 1, -(DIGIT - 1), 0.0, -2.5, float("inf")]
WIDE = [DIGIT, -DIGIT, 2**62, -(2**63), 2**63 - 1]  # ints past one digit: the converting path's reader
FORCE = "a str is never plain"  # appended to a call to send it down the converting path


def seen_by_c(*args):
    """The arguments as a C callee saw them: a Function over a Python callable echoes them back."""
    got = []
    ffikit.convert(lambda *a: got.append(a))(*args)
    (a,) = got
    return a


@pytest.mark.parametrize("n", range(0, 10))
def test_any_number_of_plain_arguments_reaches_c_in_order(n):
    args = tuple(range(n))
    assert seen_by_c(*args) == args  # n > 8 goes down the converting path
    assert seen_by_c(*args, FORCE) == args + (FORCE,)


@pytest.mark.parametrize("value", PLAIN + WIDE, ids=repr)
def test_each_plain_kind_converts_as_the_converting_path_does(value):
    fast = seen_by_c(value)[0]
    slow = seen_by_c(value, FORCE)[0]
    assert type(fast) is type(slow) is type(value)
    assert fast == slow == value
    assert testing.echo(value) == value and type(testing.echo(value)) is type(value)


def test_ints_at_every_digit_boundary_keep_their_value():
    for k in range(1, 64):
        for v in (2**k - 1, 2**k, -(2**k - 1), -(2**k)):
            if -(2**63) <= v < 2**63:
                assert testing.echo(v) == v, v


def test_ints_past_64_bits_raise_from_either_path():
    for big in (2**63, -(2**63) - 1, 2**100):
        with pytest.raises(OverflowError, match="does not fit in a 64-bit signed integer"):
            testing.echo(big)
        with pytest.raises(OverflowError, match="does not fit in a 64-bit signed integer"):
            testing.nop(1, 2.0, big)


def test_subclasses_and_foreign_numbers_take_the_converting_path_unchanged():
    class Color(enum.IntEnum):
        RED = 3

    class Real(float):
        pass

    assert seen_by_c(Color.RED, Real(1.5), np.int64(-4), np.float32(0.5)) == (3, 1.5, -4, 0.5)
    assert type(seen_by_c(Color.RED)[0]) is int and type(seen_by_c(Real(1.5))[0]) is float


def test_wrappers_are_lent_on_the_fast_path_as_on_the_converting_path():
    a = ffikit.Array([1, 2, 3])
    f = testing.echo
    assert testing.echo(a).same_as(a) and testing.echo(f).same_as(f)
    use_count = ffikit.convert(lambda x, *rest: testing.object_use_count(x))
    # Lent, never retained: the count the callee sees is the same down both paths.
    assert use_count(a) == use_count(a, FORCE)
    assert use_count(f) == use_count(f, FORCE)
    assert seen_by_c(a)[0].same_as(a) and seen_by_c(a, FORCE)[0].same_as(a)


def test_a_wrapper_its_init_did_not_construct_raises_on_either_path():
    from ffikit.testing import TestIntPair

    class Lazy(TestIntPair):
        __slots__ = ()

        def __init__(self) -> None:
            pass

    lazy = Lazy()
    for args in ((lazy,), (1, lazy), (lazy, FORCE)):
        with pytest.raises(TypeError, match="has not been constructed"):
            testing.echo(*args)


def test_a_failed_conversion_releases_what_the_call_had_converted(hooks):
    before = hooks._live_objects()
    for _ in range(3):
        with pytest.raises(OverflowError):
            testing.nop(1, ffikit.Array([1]), [1, 2], {"k": "v" * 40}, "s" * 40, 2**64)
    assert hooks._live_objects() == before


def test_results_of_every_kind_come_back_from_plain_calls():
    for value in (None, 5, 2**40, -2.5, True, "short", "a" * 100, b"xyz", [1, 2], {"k": 1}):
        f = ffikit.convert(lambda *a, value=value: value)
        r = f(1, 2, 3)
        if isinstance(value, list):
            assert type(r) is ffikit.Array and list(r) == value
        elif isinstance(value, dict):
            assert type(r) is ffikit.Map and dict(r) == value
        else:
            assert r == value and isinstance(r, type(value))
    x = np.arange(4, dtype=np.float32)
    t = ffikit.from_dlpack(x)
    assert type(testing.echo(t)) is ffikit.Tensor  # a lent Tensor wrapper: no framework to go back to
    assert type(testing.echo(x)) is ffikit.Tensor  # a numpy array: the converting path


def test_errors_from_c_on_the_fast_path_keep_their_message():
    with pytest.raises(TypeError, match=r"Mismatched number of arguments .* Expected 1 but got 2"):
        testing.add_one(1, 2)
    with pytest.raises(TypeError, match=r"Expected `int` but got `float`"):
        testing.add_one(1.5)
    with pytest.raises(TypeError, match=r"Mismatched number of arguments .* Expected 1 but got 0"):
        testing.add_one()
    assert testing.add_one(41) == 42


def test_a_python_exception_raised_behind_a_plain_call_comes_back_with_its_traceback():
    def boom(*a):
        raise KeyError(a)

    f = ffikit.convert(boom)
    for args in ((1, 2.0, None), (1, FORCE)):
        with pytest.raises(KeyError) as info:
            f(*args)
        assert info.value.args == (args,)
        assert any(entry.name == "boom" for entry in info.traceback)


@pytest.mark.parametrize("release_gil", [True, False])
def test_release_gil_off_and_on_both_take_the_fast_path(release_gil):
    f = ffikit.convert(lambda *a: sum(x for x in a if x is not None))
    f.release_gil = release_gil
    assert f(1, 2, 3) == 6 and f() == 0 and f(None, 2.5) == 2.5
    assert f(1, 2, 3, 4, 5, 6, 7, 8, 9) == 45


def test_plain_calls_from_a_native_thread_callback():
    got = []
    f = ffikit.convert(lambda *a: got.append(a))
    testing.call_from_native_thread(f, 3, 1, 2.5, None)
    assert got == [(1, 2.5, None)] * 3


# Reflected methods and construction share the Function's path (src/call.h): the same
# fast path for plain positional arguments, the same converting path for the rest.


def test_a_method_gives_the_same_result_down_every_path():
    from ffikit.testing import TestObjectBase

    o = TestObjectBase(v_i64=3)
    assert o.add_i64(4) == 7  # plain: the fast path, the object lent as argument 0
    assert o.add_i64(np.int64(4)) == 7  # a foreign int: the converting path
    assert o.add_i64(x=4) == 7  # a keyword: the converting path, bound by C
    assert TestObjectBase.add_i64(o, 4) == TestObjectBase.add_i64(o, x=np.int64(4)) == 7


def test_a_method_given_too_many_arguments_raises_cs_error_from_either_path():
    from ffikit.testing import TestObjectBase

    o = TestObjectBase()
    for args in ((1, 2), tuple(range(9)), (1, FORCE)):  # fast, more than the stack holds, converting
        with pytest.raises(TypeError, match=rf"Expected 2 but got {len(args) + 1}$"):
            o.add_i64(*args)


def test_construction_gives_the_same_object_down_every_path():
    from ffikit.testing import TestIntPair

    for make in (lambda: TestIntPair(3, 4), lambda: TestIntPair(np.int64(3), 4), lambda: TestIntPair(3, b=4),
                 lambda: TestIntPair(b=4, a=3), lambda: TestIntPair(*(3, 4)), lambda: TestIntPair(**{"a": 3, "b": 4})):
        p = make()
        assert type(p) is TestIntPair and (p.a, p.b, p.sum()) == (3, 4, 7)


def test_a_subclass_init_constructs_through_the_same_path():
    from ffikit.testing import TestIntPair

    class Sub(TestIntPair):
        __slots__ = ()

        def __init__(self, a, b):
            super().__init__(a, b=b)

    s = Sub(1, np.int64(2))
    assert type(s) is Sub and (s.a, s.b) == (1, 2)
    with pytest.raises(TypeError, match=r"^testing.TestIntPair.__init__\(\) got an unexpected keyword argument 'c\\x00'$"):
        TestIntPair(1, **{"c\0": 2})


def test_a_failed_method_or_construction_releases_what_it_had_converted(hooks):
    from ffikit.testing import TestObjectBase, TestObjectDerived

    o = TestObjectBase()
    before = hooks._live_objects()
    for _ in range(3):
        with pytest.raises(OverflowError):
            TestObjectDerived(v_map={"k": [1, 2]}, v_array=[ffikit.Array([1]), "s" * 40], v_i64=2**64)
        with pytest.raises(OverflowError):
            TestObjectDerived({"k": "v"}, [1, 2], 2**64)
        with pytest.raises(OverflowError):
            o.add_i64([1, 2], {"k": "v" * 40}, 2**64)
        with pytest.raises(TypeError, match="Mismatched type"):
            TestObjectDerived(v_map=[1], v_array=[ffikit.Array([1])])
    assert hooks._live_objects() == before
