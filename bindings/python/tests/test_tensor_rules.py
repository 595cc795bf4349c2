"""Tensor rules that the C layer decides and Python only converts (issue 21): read-only
writes, dimension and index ranges, one element as a number, fill values, shared-memory
sizes and names, negative strides and the float8 family through DLPack."""
from __future__ import annotations

import ctypes
import operator
import os

import numpy as np
import pytest

import ffikit

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (pip install torch==2.13.0)")


def read_only(x: np.ndarray) -> ffikit.Tensor:
    x = x.copy()
    x.flags.writeable = False
    t = ffikit.from_dlpack(x)
    assert t.is_read_only
    return t


# ---- Read-only tensors: refused in C ----------------------------------------------------------


def test_writes_to_a_read_only_tensor_are_refused_by_c():
    t = read_only(np.arange(6, dtype=np.int32).reshape(2, 3))
    with pytest.raises(ValueError, match=r"^fill: the tensor is read-only \(its DLPack producer marked it so\)$"):
        t.fill_(1)
    with pytest.raises(ValueError, match=r"^copy_from: the destination tensor is read-only"):
        t.copy_(np.zeros((2, 3), dtype=np.int32))
    with pytest.raises(ValueError, match="read-only"):
        t.transpose(0, 1).fill_(1)  # views keep the flag
    with pytest.raises(ValueError, match="read-only"):
        t[1].copy_(np.zeros(3, dtype=np.int32))
    get_buffer = ctypes.pythonapi.PyObject_GetBuffer
    get_buffer.argtypes = [ctypes.py_object, ctypes.c_void_p, ctypes.c_int]
    view = (ctypes.c_char * 256)()  # room for a Py_buffer
    with pytest.raises(BufferError, match=r"^a writable buffer: the tensor is read-only"):
        get_buffer(t, ctypes.addressof(view), 1)  # PyBUF_WRITABLE
    assert memoryview(t).readonly
    assert np.from_dlpack(t).tolist() == [[0, 1, 2], [3, 4, 5]]


# ---- Dimensions and indices: normalised in C, named as given -------------------------------------


def test_dimension_errors_name_the_operation_and_the_index_as_given():
    t = ffikit.zeros((2, 3), "float32")
    with pytest.raises(IndexError) as e:
        t.transpose(-100, 0)
    assert str(e.value) == "transpose: dimension -100 is out of range for a tensor with 2 dimensions (-2 to 1)"
    with pytest.raises(IndexError, match=r"^squeeze: dimension -3 is out of range for a tensor with 2 dimensions"):
        t.squeeze(-3)
    with pytest.raises(IndexError, match=r"^unsqueeze: dimension 3 is out of range .* \(-3 to 2\)$"):
        t.unsqueeze(3)
    with pytest.raises(IndexError, match=r"^permute: dimension -5 is out of range"):
        t.permute(0, -5)
    with pytest.raises(IndexError, match=r"^slice: dimension 7 is out of range"):
        t.slice(7)
    with pytest.raises(IndexError, match=r"^size: dimension 2 is out of range"):
        t.size(2)
    assert t.transpose(-1, -2).shape == (3, 2) and t.size(-1) == 3 and t.unsqueeze(-1).shape == (2, 3, 1)
    assert t.slice(-1, 1).shape == (2, 2) and t.permute(-1, 0).shape == (3, 2)
    assert t.unsqueeze(0).squeeze(-3).shape == (2, 3)


def test_no_message_names_a_c_function():
    t = ffikit.zeros((2, 3), "float32")
    calls = [lambda: t.transpose(5, 0), lambda: t.reshape(7), lambda: t.slice(0, 0, 2, 0),
             lambda: t.as_strided((9,), (1,)), lambda: t.copy_(np.zeros(3, np.float32)), lambda: t.fill_("x"),
             lambda: t[5], lambda: t.transpose(0, 1).reshape(6), lambda: ffikit.from_dlpack(object()),
             lambda: ffikit.from_dlpack(np.zeros((2, 3))[::-1].__dlpack__(max_version=(1, 0)), require_contiguous=True)]
    for call in calls:
        with pytest.raises((ValueError, IndexError, TypeError, OverflowError)) as e:
            call()
        assert "ffk_" not in str(e.value), str(e.value)


def test_integer_indexing_is_c_select():
    x = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    t = ffikit.from_dlpack(x)
    assert np.from_dlpack(t[1]).tolist() == x[1].tolist()
    assert np.from_dlpack(t[-1][-2]).tolist() == x[-1][-2].tolist()
    assert np.from_dlpack(t.select(2, -1)).tolist() == x[:, :, -1].tolist()
    assert t[1].data_ptr() == x[1].ctypes.data  # a view, not a copy
    with pytest.raises(IndexError) as e:
        t[2]
    assert str(e.value) == "index 2 is out of range for dimension 0 of size 2"
    with pytest.raises(IndexError, match="^index -4 is out of range for dimension 1 of size 3$"):
        t.select(1, -4)
    with pytest.raises(IndexError, match="^a 0-d tensor cannot be indexed$"):
        t[0][0][0][0]
    with pytest.raises(IndexError, match="^a 0-d tensor cannot be indexed$"):
        t[0][0][0][:]  # C's ffk_tensor_slice decides, as for Rust's Tensor::slice
    with pytest.raises(ValueError, match=r"^slice: step -1 is not positive$"):
        t[::-1]


# ---- One element as a number -------------------------------------------------------------------


def test_int_float_bool_index_read_the_value_not_the_bytes():
    t = ffikit.from_dlpack(np.array([49, 50], dtype=np.uint8))  # b"12": int() read it as text before
    for convert in (int, float, bool):
        with pytest.raises(ValueError, match=r"^item: a tensor with 2 elements has no single value"):
            convert(t)
    with pytest.raises(ValueError, match="2 elements"):
        operator.index(t)
    assert int(t[1]) == 50 and float(t[0]) == 49.0 and bool(t[0]) is True and operator.index(t[1]) == 50
    assert int(t.reshape(2, 1)[0]) == 49  # any one-element shape, as in PyTorch
    assert [10, 20, 30][ffikit.from_dlpack(np.array([1], dtype=np.int8))] == 20  # __index__
    f = ffikit.from_dlpack(np.array([-2.75], dtype=np.float16))
    assert float(f) == -2.75 and int(f) == -2 and bool(f) is True and f.item() == -2.75
    with pytest.raises(TypeError, match="^only integer tensors can be used as an index, not a float16 tensor$"):
        operator.index(f)
    assert bool(ffikit.from_dlpack(np.array([0.0]))) is False
    assert ffikit.from_dlpack(np.array(True)).item() is True
    with pytest.raises(ValueError, match="NaN"):
        int(ffikit.from_dlpack(np.array(np.nan)))
    with pytest.raises(ValueError, match="0 elements"):
        bool(ffikit.zeros((0,), "int8"))
    with pytest.raises(OverflowError, match="uint64 value 18446744073709551615 does not fit in an int64"):
        int(ffikit.from_dlpack(np.array([2**64 - 1], dtype=np.uint64)))
    with pytest.raises(TypeError, match="complex64 elements have no int, float or bool value"):
        float(ffikit.zeros((1,), "complex64"))
    bf = ffikit.zeros((), "bfloat16").fill_(3.5)
    assert bf.item() == 3.5


# ---- fill: values the dtype cannot hold are refused ---------------------------------------------


@pytest.mark.parametrize(
    "dtype,value,exc,message",
    [
        ("int32", 2**40, OverflowError, "fill: 1099511627776 is out of range for int32"),
        ("int32", -(2**31) - 1, OverflowError, "fill: -2147483649 is out of range for int32"),
        ("uint8", -1, OverflowError, "fill: -1 is out of range for uint8"),
        ("uint16", 65536, OverflowError, "fill: 65536 is out of range for uint16"),
        ("int64", 2.5, ValueError, "fill: 2.5 is not a whole number, so int64 cannot hold it"),
        ("int8", float("nan"), ValueError, "fill: cannot convert float NaN to an integer (int8)"),
        ("int8", float("inf"), OverflowError, "fill: cannot convert float inf to an integer (int8)"),
        ("uint32", -1.0, OverflowError, "fill: -1 is out of range for uint32"),
        ("float32", 1e300, OverflowError, "fill: 1e+300 is out of range for float32"),
        ("float16", 1e5, OverflowError, "fill: 100000 is out of range for float16"),
        ("int32", "3", TypeError, "fill: expected an int, float or bool but got str"),
    ],
)
def test_fill_refuses_values_the_dtype_cannot_hold(dtype, value, exc, message):
    t = ffikit.zeros((3,), dtype)
    with pytest.raises(exc) as e:
        t.fill_(value)
    assert str(e.value) == message
    assert np.from_dlpack(t).tolist() == [0, 0, 0]  # nothing was written


def test_fill_stores_what_fits():
    assert np.from_dlpack(ffikit.zeros((2,), "int32").fill_(-(2**31))).tolist() == [-(2**31)] * 2
    assert np.from_dlpack(ffikit.zeros((2,), "uint8").fill_(255)).tolist() == [255, 255]
    assert np.from_dlpack(ffikit.zeros((2,), "int16").fill_(7.0)).tolist() == [7, 7]
    assert np.from_dlpack(ffikit.zeros((2,), "float16").fill_(0.1)).tolist() == [np.float16(0.1)] * 2
    assert np.from_dlpack(ffikit.zeros((2,), "bool").fill_(2)).tolist() == [True, True]
    assert np.isinf(np.from_dlpack(ffikit.zeros((1,), "float32").fill_(float("inf")))).all()


# ---- fill: complex, float16 and bfloat16 values as numpy and torch store them --------------------

COMPLEX_FILLS = [1 + 2j, -0.5 - 3.25j, complex(0.1, 1 / 3), complex(1e30, -1e-30), complex(-0.0, 0.0),
                 complex(float("inf"), -float("inf")), 3, -2.5, True, np.complex64(1.5 - 2j), np.complex128(-1j)]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_fill_stores_numpy_bits(dtype):
    t = ffikit.zeros((2, 3), dtype)
    for value in COMPLEX_FILLS:
        expected = np.full((2, 3), value, dtype=dtype)
        assert np.from_dlpack(t.fill_(value)).tobytes() == expected.tobytes(), value  # bit for bit


def test_complex_fill_of_strided_views_and_nan():
    base = np.zeros((4, 6), dtype=np.complex128)
    t = ffikit.from_dlpack(base)
    t.transpose(0, 1)[::2].fill_(2 - 1j)  # rows 0, 2, 4 of the transpose: columns 0, 2, 4
    expected = np.zeros((4, 6), dtype=np.complex128)
    expected[:, ::2] = 2 - 1j
    assert np.array_equal(base, expected)
    nan = ffikit.zeros((2,), "complex64").fill_(complex(float("nan"), 1.0))
    got = np.from_dlpack(nan)
    assert np.isnan(got.real).all() and (got.imag == 1.0).all()


COMPLEX_REFUSED = [
    ("float32", 1 + 2j, TypeError, "fill: cannot put the complex value (1+2j) into float32"),
    ("int32", 1 + 0j, TypeError, "fill: cannot put the complex value (1+0j) into int32"),
    ("bool", 1j, TypeError, "fill: cannot put the complex value 1j into bool"),
    ("complex64", 1e300 + 0j, OverflowError, "fill: (1e+300+0j) is out of range for complex64"),
    ("complex64", complex(1, 1e39), OverflowError, "fill: (1+1e+39j) is out of range for complex64"),
]


def test_complex_fill_refuses_what_the_dtype_cannot_hold():
    for dtype, value, exc, message in COMPLEX_REFUSED:
        t = ffikit.zeros((2,), dtype)
        with pytest.raises(exc) as e:
            t.fill_(value)
        assert str(e.value) == message
        assert np.from_dlpack(t).tolist() == [0, 0]


def test_complex_fill_with_a_zero_imaginary_part_fills_real_dtypes():
    assert np.from_dlpack(ffikit.zeros((2,), "float64").fill_(2.5 + 0j)).tolist() == [2.5, 2.5]
    assert np.from_dlpack(ffikit.zeros((2,), "float32").fill_(np.complex64(-1))).tolist() == [-1.0, -1.0]


HALF_FILLS = [0.1, -2.75, 65504.0, 65519.0, 6e-8, 1e-9, -0.0, 1 / 3, float("inf"), -float("inf"), 3, True, -7]


def _bits16(t: ffikit.Tensor) -> list[int]:
    """The raw 16-bit elements of a host tensor (numpy has no bfloat16 to read them with)."""
    return np.frombuffer(ctypes.string_at(t.data_ptr(), t.nbytes()), dtype=np.uint16).tolist()


def _bfloat16_bits(v: float) -> int:
    """float32's bits rounded to the upper 16, to nearest even (what torch stores)."""
    b = int(np.array(v, dtype=np.float32).view(np.uint32))
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF


def test_float16_fill_stores_numpy_bits():
    t = ffikit.zeros((3,), "float16")
    for value in HALF_FILLS:
        assert _bits16(t.fill_(value)) == [int(np.float16(value).view(np.uint16))] * 3, value


def test_bfloat16_fill_rounds_to_nearest_even():
    t = ffikit.zeros((3,), "bfloat16")
    for value in HALF_FILLS:
        assert _bits16(t.fill_(value)) == [_bfloat16_bits(float(value))] * 3, value
        if torch is not None:  # and what torch itself stores
            expected = torch.full((3,), float(value), dtype=torch.bfloat16).view(torch.int16)
            assert torch.from_dlpack(t).view(torch.int16).tolist() == expected.tolist(), value


def test_half_fills_of_nan_and_strided_views():
    h = ffikit.zeros((4, 4), "float16")
    h.transpose(0, 1)[1].fill_(1.5)  # column 1
    expected = np.zeros((4, 4), dtype=np.float16)
    expected[:, 1] = 1.5
    assert np.array_equal(np.from_dlpack(h), expected)
    assert np.isnan(np.from_dlpack(ffikit.zeros((2,), "float16").fill_(float("nan")))).all()
    b = _bits16(ffikit.zeros((2,), "bfloat16").fill_(float("nan")))
    assert all((x & 0x7F80) == 0x7F80 and (x & 0x7F) != 0 for x in b)  # a NaN: all-ones exponent, mantissa set


# ---- Shared memory: a C constructor; a missing name is FileNotFoundError ------------------------


def test_empty_shared_sizes_are_computed_and_checked_in_c():
    with pytest.raises(ValueError, match=r"^empty_shared: shape \[2305843009213693952, 2\] of int64 has more bytes than fit "
                                         r"in 64 bits$"):
        ffikit.empty_shared((2**61, 2), "int64")
    with pytest.raises(ValueError, match=r"^empty_shared: shape\[1\] is -1, and a dimension cannot be negative$"):
        ffikit.empty_shared((2, -1), "int64")
    t = ffikit.empty_shared((3, 5), "float64")
    assert t.nbytes() == 120 and t.shared_name.startswith("/")
    assert np.from_dlpack(t).sum() == 0


def test_shared_memory_names_start_with_a_slash_and_a_missing_one_is_file_not_found():
    name = f"/ffikit-rules-{os.getpid()}"
    t = ffikit.empty_shared((2,), "int32", name=name)
    assert t.shared_name == name
    with pytest.raises(ValueError, match="does not start with '/'"):
        ffikit.empty_shared((2,), "int32", name=name[1:])
    assert "'/'" in ffikit.empty_shared.__doc__
    missing = f"/ffikit-rules-missing-{os.getpid()}"
    from ffikit._tensor import _attach_shared  # the path unpickling takes

    with pytest.raises(FileNotFoundError, match=f"^no shared memory named `{missing}`$"):
        _attach_shared(missing, (2,), (1,), "int32", 0)
    del t


# ---- DLPack: negative strides, float8, non-tensors ----------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.arange(6, dtype=np.float32)[::-1],
        lambda: np.arange(12, dtype=np.int16).reshape(3, 4)[::-1, ::-1],
        lambda: np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::-2],
        lambda: np.arange(24, dtype=np.int32).reshape(2, 3, 4)[::-1].transpose(2, 0, 1),
    ],
    ids=["reversed", "2-d flip", "reversed stepped columns", "3-d flip transposed"],
)
def test_negative_strides_import_view_copy_and_export(make):
    x = make()
    t = ffikit.from_dlpack(x)
    assert t.strides == tuple(s // x.itemsize for s in x.strides) and t.data_ptr() == x.ctypes.data
    assert np.array_equal(np.from_dlpack(t), x) and np.from_dlpack(t).ctypes.data == x.ctypes.data
    assert np.array_equal(np.asarray(t), x) and np.shares_memory(np.asarray(t), x)  # the buffer protocol
    assert np.array_equal(np.asarray(memoryview(t)), x)
    c = t.contiguous()
    assert c.is_contiguous() and np.array_equal(np.from_dlpack(c), x)
    assert np.array_equal(np.from_dlpack(t[-1]), x[-1])
    assert np.array_equal(np.from_dlpack(t[::2]), x[::2])
    assert np.array_equal(np.from_dlpack(ffikit.Tensor.from_buffer(x)), x)
    dst = ffikit.from_dlpack(np.zeros_like(x)[::-1])
    dst.copy_(x)
    assert np.array_equal(np.from_dlpack(dst), x)
    t.fill_(1)
    assert (x == 1).all()


def test_negative_stride_views_stay_inside_the_import():
    base = np.arange(8, dtype=np.int64)
    t = ffikit.from_dlpack(base[5:1:-1])  # 5, 4, 3, 2: elements before the data pointer
    with pytest.raises(ValueError, match=r"^as_strided: .* before the start of its storage"):
        t.as_strided((5,), (-1,), 0)
    with pytest.raises(ValueError, match=r"^as_strided: .* past the end of its storage"):
        t.as_strided((2,), (1,), 0)
    assert np.from_dlpack(t.as_strided((2,), (-2,), 0)).tolist() == [5, 3]


@needs_torch
def test_torch_gets_a_contiguous_copy_of_a_reversed_tensor():
    t = ffikit.from_dlpack(np.arange(4, dtype=np.float32)[::-1])
    # torch refuses negative strides (and aborts on them through DLPack): hand it a copy.
    assert torch.from_dlpack(t.contiguous()).tolist() == [3.0, 2.0, 1.0, 0.0]


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float4_e2m1fn_x2"])
def test_float8_and_packed_float4_round_trip_through_dlpack(name):
    t = ffikit.zeros((4,), name)
    back = ffikit.from_dlpack(t.__dlpack__(max_version=(1, 1)))
    assert back.dtype == t.dtype and back.nbytes() == 4 and back.data_ptr() == t.data_ptr()


@needs_torch
def test_torch_float8_tensors_import():
    x = torch.zeros(4, dtype=torch.float8_e4m3fn)
    t = ffikit.from_dlpack(x)
    assert t.dtype == "float8_e4m3fn" and t.data_ptr() == x.data_ptr()


def test_vector_dtypes_are_refused_for_their_lanes():
    with pytest.raises(ValueError) as e:
        ffikit.empty((2,), "float32x4")
    assert str(e.value) == ("empty: tensors cannot hold dtype float32x4: an element has one lane, and float32x4 has 4 "
                            "(vector dtypes are not supported)")


def test_from_dlpack_of_a_non_tensor_is_a_type_error():
    with pytest.raises(TypeError, match=r"expected a tensor \(an object with __dlpack__.*not list$"):
        ffikit.from_dlpack([1, 2])
    with pytest.raises(TypeError, match="not int"):
        ffikit.from_dlpack(3)


def test_a_buffer_of_text_is_named_as_such():
    with pytest.raises(TypeError) as e:
        ffikit.Tensor.from_buffer(np.array(["abc", "de"]))
    assert str(e.value) == "from_buffer: buffer format '3w' (text) has no ffikit dtype; tensors hold numbers and bools"
