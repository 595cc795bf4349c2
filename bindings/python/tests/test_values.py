"""Device, dtype, Shape, String, Bytes: construction, text, errors, pickle, hash."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import ffikit
from ffikit import DLDeviceType, Device


@pytest.mark.parametrize(
    "args, text, type_, index",
    [(("cuda:1",), "cuda:1", "cuda", 1), (("cuda", 1), "cuda:1", "cuda", 1), (("cpu",), "cpu:0", "cpu", 0),
     ((DLDeviceType.kDLCUDA, 2), "cuda:2", "cuda", 2), ((2, np.int64(3)), "cuda:3", "cuda", 3),
     (("cpu", None), "cpu:0", "cpu", 0), (("cuda_host:0",), "cuda_host:0", "cuda_host", 0),
     (("trn", 4), "trn:4", "trn", 4)],
)
def test_device_construction(args, text, type_, index):
    d = Device(*args)
    assert str(d) == text and d.type == type_ and d.index == index
    assert repr(d) == f"device(type='{type_}', index={index})"
    assert ffikit.device(*args) == d


def test_device_names_cover_the_spec():
    for name in ("cpu cuda cuda_host cuda_managed opencl vulkan metal vpi rocm rocm_host ext_dev oneapi "
                 "webgpu hexagon maia trn").split():
        assert Device(name).type == name


@pytest.mark.parametrize(
    "args, exc, message",
    [(("gpu",), ValueError, "Unknown device: gpu"), (("cpu:0:0",), ValueError, "Invalid device: cpu:0:0"),
     (("cpu:?",), ValueError, "Invalid device index: ?"), (("cpu:",), ValueError, "Invalid device index: "),
     (("cpu", 1.5), TypeError, "Invalid device index: 1.5"), ((None,), TypeError, None),
     (("cpu", "1"), TypeError, "Invalid device index: '1'"),
     # A type code: ffk_device_check_type's words, which the binding's own check had too.
     ((99,), ValueError, "Unknown device: 99"), ((-1,), ValueError, "Unknown device: -1"),
     ((2**40,), ValueError, "Unknown device: 1099511627776"), ((2**70,), ValueError, f"Unknown device: {2**70}")],
)
def test_device_errors(args, exc, message):
    with pytest.raises(exc) as info:
        Device(*args)
    if message is not None:
        assert str(info.value) == message


def test_device_is_hashable_picklable_and_comparable():
    a, b = Device("cuda:1"), Device("cuda", 1)
    assert a == b and hash(a) == hash(b) and a != Device("cuda:2")
    assert pickle.loads(pickle.dumps(a)) == a
    assert a.dlpack_device_type() == 2 and {a: 1}[b] == 1


def test_dtype_keeps_the_given_text_and_parses_aliases():
    for text, canonical in [("float32", "float32"), ("f32", "float32"), ("i8", "int8"), ("u16", "uint16"),
                            ("bf16", "bfloat16"), ("fp8_e4m3fn", "float8_e4m3fn"), ("float4_e2m1fnx2", "float4_e2m1fnx2"),
                            ("handle", "handle"), ("int8x4", "int8x4")]:
        d = ffikit.dtype(text)
        assert d == text and isinstance(d, str)
        assert str(ffikit.dtype.from_dlpack_data_type((d.type_code, d.bits, d.lanes))) == canonical


def test_dtype_fields_and_derived_dtypes():
    d = ffikit.dtype("float32")
    assert (d.type_code, d.bits, d.lanes, d.itemsize) == (2, 32, 1, 4)
    assert d.with_lanes(4) == "float32x4" and d.with_lanes(4).itemsize == 16
    assert ffikit.dtype("bool").with_lanes(4) == "boolx4"
    assert ffikit.dtype("float4_e2m1fnx2").itemsize == 1
    assert d.is_float and not d.is_integer and ffikit.int8.is_integer and ffikit.bool.is_bool
    assert ffikit.dtype("handle").is_handle
    assert repr(d) == "dtype('float32')"


def test_dtype_errors_pickle_and_constants():
    with pytest.raises(ValueError, match="flaot32"):
        ffikit.dtype("flaot32")
    assert not ffikit.dtype.is_dtype("nope") and ffikit.dtype.is_dtype("i32")
    assert pickle.loads(pickle.dumps(ffikit.dtype("f32"))) == "f32"
    for name in ["int8", "uint64", "float16", "bfloat16", "float8_e5m2", "float6_e3m2fn", "float4_e2m1fnx2"]:
        assert getattr(ffikit, name) == name


def test_dtype_from_and_to_numpy():
    assert ffikit.dtype(np.float32) == "float32"
    assert ffikit.dtype(np.dtype("int16")) == "int16"
    assert ffikit.dtype(np.bool_) == "bool"
    assert ffikit.dtype("float64").to_numpy() == np.dtype("float64")


def test_dtype_refuses_a_non_native_byte_order_instead_of_reinterpreting():
    with pytest.raises(ValueError) as info:
        ffikit.dtype(np.dtype(">f4"))
    assert str(info.value) == (
        'numpy dtype ">f4" is big-endian, not this machine\'s byte order (little-endian): ffikit shares data as it '
        'is and never swaps bytes; convert it first (astype("=f4"))'
    )
    with pytest.raises(ValueError, match='">i8" is big-endian'):
        ffikit.get_global_func("testing.echo")(np.dtype(">i8"))
    assert ffikit.dtype(np.dtype(">i1")) == "int8"  # a single byte has no order
    assert ffikit.dtype(np.dtype("<f8")) == "float64" and ffikit.dtype(np.dtype("=u2")) == "uint16"
    with pytest.raises(ValueError, match=r'^numpy dtype "<U3" \(unicode text\) has no DLPack data type$'):
        ffikit.dtype(np.dtype("U3"))
    with pytest.raises(ValueError, match=r'"<M8\[ns\]" \(datetimes\)'):
        ffikit.dtype(np.dtype("datetime64[ns]"))


def test_float4_lanes_take_tvm_ffi_spellings():
    for text in ["f4_e2m1fn_x2", "fp4_e2m1fn_x2", "float4_e2m1fn_x2", "float4_e2m1fnx2", "fp4_e2m1fnx2"]:
        d = ffikit.dtype(text)
        assert d == text and (d.type_code, d.bits, d.lanes) == (17, 4, 2)
    assert ffikit.dtype("fp4_e2m1fn_x4").lanes == 4
    for text in ["fp4_e2m1fn_x", "fp4_e2m1fn_x0", "fp8_e4m3fn_x2", "float32_x2"]:
        with pytest.raises(ValueError, match=text):
            ffikit.dtype(text)


def test_foreign_dtypes_convert_to_dtype_as_arguments():
    echo = ffikit.get_global_func("testing.echo")
    for foreign, text in [(np.dtype("float32"), "float32"), (np.dtype("bool"), "bool"), (np.dtype("uint8"), "uint8"),
                          (np.dtype("complex64"), "complex64")]:
        for r in (echo(foreign), ffikit.convert(foreign)):
            assert type(r) is ffikit.dtype and r == text
    assert ffikit.get_global_func("testing.schema_id_dtype")(np.dtype("int16")) == "int16"

    class DLPackDType:
        def __dlpack_data_type__(self):
            return (2, 16, 4)

    r = echo(DLPackDType())
    assert type(r) is ffikit.dtype and r == "float16x4"
    assert ffikit.dtype(DLPackDType()) == "float16x4"


def test_torch_dtypes_convert_to_dtype_as_arguments():
    torch = pytest.importorskip("torch")
    echo = ffikit.get_global_func("testing.echo")
    for foreign, text in [(torch.float32, "float32"), (torch.bfloat16, "bfloat16"), (torch.uint16, "uint16"),
                          (torch.bool, "bool"), (torch.float8_e4m3fn, "float8_e4m3fn")]:
        for r in (echo(foreign), ffikit.convert(foreign)):
            assert type(r) is ffikit.dtype and r == text
    if hasattr(torch, "float4_e2m1fn_x2"):
        assert echo(torch.float4_e2m1fn_x2) == "float4_e2m1fnx2"


def test_ml_dtypes_convert_to_dtype():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    echo = ffikit.get_global_func("testing.echo")
    for name in ["bfloat16", "float8_e4m3fn", "float8_e5m2", "int4"]:
        assert echo(np.dtype(getattr(ml_dtypes, name))) == name
        assert ffikit.dtype(getattr(ml_dtypes, name)) == name
    with pytest.raises(ValueError, match="big-endian"):
        ffikit.dtype(np.dtype(ml_dtypes.bfloat16).newbyteorder(">"))


def test_dtype_from_and_to_torch():
    torch = pytest.importorskip("torch")
    assert ffikit.dtype(torch.float16) == "float16"
    assert ffikit.dtype(torch.bfloat16) == "bfloat16"
    assert ffikit.dtype(torch.uint16) == "uint16"
    assert ffikit.dtype(torch.float8_e4m3fn) == "float8_e4m3fn"
    assert ffikit.dtype("int32").to_torch() is torch.int32


def test_shape_is_a_tuple_with_its_object():
    s = ffikit.Shape((2, 3))
    assert s == (2, 3) and isinstance(s, tuple) and repr(s) == "(2, 3)"
    assert s._ffikit_object.same_as(s._tvm_ffi_cached_object)
    assert pickle.loads(pickle.dumps(s)) == s and hash(s) == hash((2, 3))
    with pytest.raises(TypeError):
        ffikit.Shape([1, "x"])


def test_string_and_bytes_subclass_builtins():
    s = ffikit.String("hello world, long enough")
    assert isinstance(s, str) and s == "hello world, long enough" and hash(s) == hash(str(s))
    b = ffikit.Bytes(b"\x00\x01 bytes")
    assert isinstance(b, bytes) and b == b"\x00\x01 bytes"


def test_string_and_bytes_pickle_and_copy_as_plain_str_and_bytes():
    # tvm_ffi's String and Bytes pickle (and copy) as the builtin values.
    s = ffikit.String("hello world, long enough")
    b = ffikit.Bytes(b"\x00\x01 bytes")
    for clone in (pickle.loads(pickle.dumps(s)), copy.copy(s), copy.deepcopy(s)):
        assert type(clone) is str and clone == s
    for clone in (pickle.loads(pickle.dumps(b)), copy.copy(b), copy.deepcopy(b)):
        assert type(clone) is bytes and clone == b
    short = ffikit.convert("ab")
    assert type(pickle.loads(pickle.dumps(short))) is str


def test_object_base_behaviour():
    f = ffikit.get_global_func("testing.echo")
    g = ffikit.get_global_func("testing.echo")
    assert f is not g and f == g and hash(f) == hash(g) and f.same_as(g)
    assert f.__chandle__() == g.__chandle__() and f.type_key == "ffikit.Function"
    import weakref

    assert weakref.ref(f)() is f
    with pytest.raises(TypeError):
        ffikit.Object()


def test_runtime_types_get_an_auto_made_class_named_after_their_key():
    from ffikit import _core

    index = _core._type_register("mylib.Point")
    assert _core._type_register("mylib.Point") == index
    obj = _core._new_object(index)
    assert type(obj).__name__ == "Point" and isinstance(obj, ffikit.Object)
    assert type(_core._new_object(index)) is type(obj)
    assert "mylib.Point" in repr(obj)


def test_version_is_the_c_library_version():
    from ffikit import _core

    assert ffikit.__version__ == _core.__version__
    assert isinstance(_core._abi_version(), tuple)
