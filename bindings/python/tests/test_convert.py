"""Python -> ffikit -> Python: the spec's ordered rules, round trips through testing.echo."""
from __future__ import annotations

import fractions
import sys

import numpy as np
import pytest

import ffikit
from ffikit import _core, testing

echo = ffikit.get_global_func("testing.echo")

# type indices of docs/design.md
NONE, INT, BOOL, FLOAT, DTYPE, DEVICE, RAW_STR, BYTE_VIEW, SMALL_STR, SMALL_BYTES = 0, 1, 2, 3, 5, 6, 8, 9, 11, 12
STRING, BYTES, ERROR, FUNCTION, SHAPE, ARRAY, MAP = 65, 66, 67, 68, 69, 71, 72
# Python objects travel as tvm_ffi's ffi.OpaquePyObject, a run-time subtype of Opaque (74).
OPAQUE = _core._type_key_to_index("ffi.OpaquePyObject")


@pytest.mark.parametrize(
    "value, index",
    [
        (None, NONE), (True, BOOL), (False, BOOL), (0, INT), (-(2**63), INT), (2**63 - 1, INT), (1.5, FLOAT),
        (np.int8(3), INT), (np.uint64(7), INT), (np.float32(0.5), FLOAT), (np.bool_(True), BOOL),
        (fractions.Fraction(1, 2), FLOAT), ("", SMALL_STR), ("1234567", SMALL_STR), ("12345678", RAW_STR),
        ("\u00e9" * 3, SMALL_STR), ("\u00e9" * 4, RAW_STR), (b"", SMALL_BYTES), (b"1234567", SMALL_BYTES),
        (b"12345678", BYTE_VIEW), (bytearray(b"ab"), SMALL_BYTES), (bytearray(b"x" * 20), BYTES),
        ([1, 2], ARRAY), ((1, "a"), ARRAY), ({"a": 1}, MAP), (ffikit.dtype("float32"), DTYPE),
        (ffikit.Device("cuda:1"), DEVICE), (ffikit.Shape((2, 3)), SHAPE), (len, FUNCTION), (lambda: 0, FUNCTION),
        (object(), OPAQUE), (ffikit.String("a long string here"), STRING),
        (ffikit.Bytes(b"long bytes value"), BYTES),
    ],
)
def test_argument_kinds_follow_the_ordered_rules(value, index):
    assert _core._any_type_index(value) == index


def test_exceptions_convert_to_errors():
    assert _core._any_type_index(ValueError("x")) == ERROR


def test_bool_is_checked_before_int_and_int_subclasses_are_ints():
    import enum

    class Color(enum.IntEnum):
        RED = 3

    assert echo(True) is True
    assert type(echo(Color.RED)) is int and echo(Color.RED) == 3


def test_ints_beyond_int64_raise_overflow_naming_the_value():
    with pytest.raises(OverflowError, match=r"^18446744073709551616 does not fit in a 64-bit signed integer$"):
        echo(2**64)
    with pytest.raises(OverflowError, match=str(-(2**63) - 1)):
        echo(-(2**63) - 1)
    with pytest.raises(OverflowError):
        ffikit.convert([1, 2**70])


@pytest.mark.parametrize(
    "value",
    [None, True, False, 0, -5, 2**63 - 1, 0.25, float("inf"), "", "short", "a string longer than seven bytes",
     "\u4e2d\u6587\u5b57\u7b26", "nul\x00inside and long", b"", b"\x00\xff", b"bytes longer than seven"],
)
def test_plain_values_round_trip_with_their_type(value):
    out = echo(value)
    assert out == value
    assert isinstance(out, type(value))


def test_nan_round_trips():
    out = echo(float("nan"))
    assert out != out


def test_long_strings_come_back_as_String_keeping_their_object():
    s = echo("a string of sixty-four bytes ..................................")
    assert type(s) is ffikit.String
    handle = s._ffikit_object.__chandle__()
    again = echo(s)
    assert again._ffikit_object.__chandle__() == handle  # passed back without a copy
    assert s._tvm_ffi_cached_object.same_as(again._ffikit_object)


def test_short_strings_come_back_as_plain_str_and_bytes():
    assert type(echo("abc")) is str
    assert type(echo(b"abc")) is bytes


def test_long_bytes_come_back_as_Bytes_keeping_their_object():
    b = echo(b"0123456789abcdef")
    assert type(b) is ffikit.Bytes and b == b"0123456789abcdef"
    assert echo(b)._ffikit_object.same_as(b._ffikit_object)


def test_opaque_objects_come_back_as_the_very_same_object():
    class Thing:
        pass

    t = Thing()
    before = sys.getrefcount(t)
    assert echo(t) is t
    assert ffikit.convert(t) is t
    assert sys.getrefcount(t) == before


def test_lists_tuples_and_dicts_become_containers_recursively():
    a = echo([1, (2, "x"), {"k": [3]}])
    assert isinstance(a, ffikit.Array)
    assert a[0] == 1 and isinstance(a[1], ffikit.Array) and isinstance(a[2], ffikit.Map)
    assert a[2]["k"] == [3]
    assert a == [1, (2, "x"), ffikit.convert({"k": [3]})]


def test_dtype_and_device_round_trip():
    assert echo(ffikit.dtype("f32")) == "float32"
    assert isinstance(echo(ffikit.dtype("int8x4")), ffikit.dtype)
    assert echo(ffikit.Device("cuda", 2)) == ffikit.Device("cuda:2")
    assert echo(ffikit.DataType("bool")) == "bool"


def test_shape_round_trips_as_the_same_object():
    s = ffikit.Shape([2, 3, 4])
    out = echo(s)
    assert type(out) is ffikit.Shape and out == (2, 3, 4)
    assert out._ffikit_object.same_as(s._ffikit_object)


def test_callables_become_functions_and_functions_pass_their_handle():
    f = echo(lambda x: x * 2)
    assert isinstance(f, ffikit.Function) and f(21) == 42
    g = ffikit.get_global_func("testing.add_one")
    assert echo(g).same_as(g)


def test_exceptions_become_errors_and_come_back_as_the_same_exception():
    e = KeyError("missing")
    assert echo(e) is e
    assert isinstance(e.__ffikit_error__, ffikit.Error)
    assert e.__ffikit_error__.kind == "KeyError"


def _raise_key_error():
    raise KeyError("gone")


def test_convert_of_an_exception_gives_its_error_with_the_python_frames():
    try:
        _raise_key_error()
    except KeyError as e:
        err = ffikit.convert(e)
        assert type(err) is ffikit.Error
        assert (err.kind, err.message) == ("KeyError", "gone")
        assert err.same_as(e.__ffikit_error__)
        lines = err.backtrace.splitlines()
        assert len(lines) == 2, err.backtrace  # innermost first, as tvm_ffi lists them
        assert lines[0].endswith("in _raise_key_error") and "test_convert.py" in lines[0]
        assert lines[1].endswith("in test_convert_of_an_exception_gives_its_error_with_the_python_frames")
        assert ffikit.convert(e).backtrace == err.backtrace  # no frame is recorded twice
        assert echo(e) is e  # through C and back: still the exception itself
    fresh = ffikit.convert(ValueError("never raised"))
    assert (fresh.kind, fresh.message, fresh.backtrace) == ("ValueError", "never raised", "")


def test_convert_of_an_exception_from_c_keeps_the_c_frames():
    with pytest.raises(ValueError) as info:
        testing.raise_error("ValueError", "from C")
    err = ffikit.convert(info.value)
    assert err.same_as(info.value.__ffikit_error__)
    assert "ffk_testing_raise_error" in err.backtrace and "in call to Function `testing.raise_error`" in err.backtrace
    assert "test_convert_of_an_exception_from_c_keeps_the_c_frames" in err.backtrace


def test_convert_returns_the_ffikit_view_of_a_value():
    assert ffikit.convert(3) == 3
    assert isinstance(ffikit.convert((1, 2)), ffikit.Array)
    assert isinstance(ffikit.convert({"a": 1}), ffikit.Map)
    assert isinstance(ffikit.convert(print), ffikit.Function)


@pytest.mark.parametrize("value", [b"", b"ab", b"\x00" * 7, b"more than seven bytes", bytearray(b"xy"),
                                   bytearray(b"a bytearray, long")])
def test_convert_of_bytes_and_bytearray_gives_ffikit_bytes(value):
    r = ffikit.convert(value)
    assert type(r) is ffikit.Bytes and r == bytes(value)
    assert r._ffikit_object.type_key == "ffikit.Bytes"
    assert echo(r) == bytes(value)


@pytest.mark.parametrize("value", ["", "ab", "more than seven bytes"])
def test_convert_of_str_gives_ffikit_string(value):
    r = ffikit.convert(value)
    assert type(r) is ffikit.String and r == value
    assert r._ffikit_object.type_key == "ffikit.String"


def test_conversion_decisions_are_cached_per_exact_type():
    class Late:
        pass

    x = Late()
    assert _core._any_type_index(x) == OPAQUE
    Late.__call__ = lambda self: 1  # the rule was decided for this type already
    assert _core._any_type_index(Late()) == OPAQUE


def test_deep_nesting_fails_cleanly():
    deep: list = []
    for _ in range(100000):
        deep = [deep]
    with pytest.raises(RecursionError):
        echo(deep)


def test_invalid_utf8_from_surrogates_is_an_error():
    with pytest.raises(UnicodeEncodeError):
        echo("\ud800 lone surrogate")


# ---- ObjectConvertible (tvm_ffi's): an instance converts to the Object asobject() returns ----

class _AsArray(ffikit.ObjectConvertible):
    def __init__(self, *items):
        self.items = items

    def asobject(self):
        return ffikit.Array(self.items)


def test_an_object_convertible_becomes_its_object_wherever_values_convert():
    v = _AsArray(1, 2)
    assert echo(v) == (1, 2) and isinstance(echo(v), ffikit.Array)  # a call's argument
    assert ffikit.convert(v) == (1, 2)  # convert
    assert ffikit.Array([v])[0] == (1, 2)  # a container element
    assert ffikit.Map({"k": v})["k"] == (1, 2)
    d = ffikit.Dict()
    d["k"] = v
    assert d["k"] == (1, 2)


def test_asobject_keeps_the_object_alive_when_it_made_the_only_reference():
    # asobject() returns a fresh Array nothing else holds: the call (and the container) keep it.
    assert testing.echo(_AsArray("x" * 50))[0] == "x" * 50
    arr = ffikit.List([_AsArray(3)])
    assert arr[0] == (3,)


def test_an_object_convertible_without_asobject_or_with_a_wrong_result_is_refused():
    class Missing(ffikit.ObjectConvertible):
        pass

    class Wrong(ffikit.ObjectConvertible):
        def asobject(self):
            return 5  # tvm_ffi 0.1.15 crashes here

    class Raises(ffikit.ObjectConvertible):
        def asobject(self):
            raise KeyError("no object")

    with pytest.raises(NotImplementedError, match="Missing does not implement asobject"):
        echo(Missing())
    with pytest.raises(TypeError, match=r"Wrong.asobject\(\) must return an ffikit Object, got int"):
        echo(Wrong())
    with pytest.raises(TypeError, match=r"Wrong.asobject\(\) must return an ffikit Object, got int"):
        ffikit.Array([Wrong()])
    with pytest.raises(KeyError, match="no object"):
        ffikit.convert(Raises())


# ---- convert_func ----

def test_convert_func_wraps_a_callable_as_convert_does():
    f = ffikit.convert_func(lambda x, y: x + y)
    assert isinstance(f, ffikit.Function) and f(1, 2) == 3
    assert testing.apply(f, 2, 3) == 5
    assert type(testing.apply(ffikit.convert_func(lambda t: t), np.zeros(2))) is ffikit.Tensor
    with pytest.raises(TypeError, match="convert_func expects a callable, got int"):
        ffikit.convert_func(1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tensor_cls <class 'int'> must expose __dlpack_c_exchange_api__"):
        ffikit.convert_func(lambda x: x, tensor_cls=int)
    with pytest.raises(TypeError, match="tensor_cls must be a class, got int"):
        ffikit.convert_func(lambda x: x, tensor_cls=3)  # type: ignore[arg-type]
