"""Tensors and DLPack: numpy and PyTorch at the same data pointer both ways, the buffer
protocol, hostile producers, views, pickling and shared memory across processes."""
from __future__ import annotations

import concurrent.futures
import gc
import multiprocessing
import os
import pickle
import signal

import numpy as np
import pytest

import ffikit
from ffikit import testing

from dlpack_producer import Producer

torch = pytest.importorskip("torch") if os.environ.get("FFIKIT_REQUIRE_TORCH") else None
try:
    import torch  # noqa: F811
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (pip install torch==2.13.0)")

NUMPY_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                "float32", "float64", "complex64", "complex128"]


def layouts():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    return {
        "c-order": base,
        "f-order": np.asfortranarray(base),
        "transposed": base.T,
        "stepped": base[::2, ::3],
        "offset": base[1:, 2:],
        "zero-size": base[:0],
        "0-d": np.array(3.5, dtype=np.float32),
        "3-d": np.arange(60, dtype=np.int16).reshape(3, 4, 5).transpose(2, 0, 1),
    }


@pytest.mark.parametrize("name", list(layouts()))
def test_numpy_round_trip_keeps_pointer_shape_and_strides(name):
    x = layouts()[name]
    t = ffikit.from_dlpack(x)
    assert t.shape == x.shape and t.ndim == x.ndim and t.dtype == str(x.dtype)
    if x.size:
        assert t.data_ptr() == x.ctypes.data
        assert t.strides == tuple(s // x.itemsize for s in x.strides)
    y = np.from_dlpack(t)
    assert y.shape == x.shape and np.array_equal(y, x)
    if x.size:
        assert y.ctypes.data == x.ctypes.data
    assert t.is_contiguous() == (x.flags.c_contiguous or x.size == 0)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_every_numpy_dtype_crosses(dtype):
    x = np.ones((2, 3), dtype=dtype)
    t = ffikit.from_dlpack(x)
    assert t.dtype == dtype and t.data_ptr() == x.ctypes.data
    assert np.from_dlpack(t).dtype == x.dtype
    assert np.asarray(t).dtype == x.dtype and np.shares_memory(np.asarray(t), x)


def test_read_only_producers_stay_read_only():
    x = np.arange(4, dtype=np.int32)
    x.flags.writeable = False
    t = ffikit.from_dlpack(x)
    assert t.is_read_only
    # C's ffk_tensor_to_dlpack refuses it (the legacy struct cannot say read-only) and words
    # it; __dlpack__ raises it as the array API's BufferError, C's ValueError its cause.
    with pytest.raises(BufferError, match=r"^to_dlpack: a read-only tensor cannot be exported as a legacy "
                                          r"DLManagedTensor \(it has no read-only flag\); export a versioned one "
                                          r"\(DLPack 1.0 or newer\)$") as caught:
        t.__dlpack__()
    assert type(caught.value.__cause__) is ValueError
    assert t.__dlpack__(max_version=(1, 0)) is not None and t.__dlpack__(copy=True) is not None
    assert not np.from_dlpack(t).flags.writeable
    assert memoryview(t).readonly
    with pytest.raises(ValueError, match="read-only"):
        t.fill_(1)


def test_capsule_is_consumed_exactly_once():
    x = np.arange(3.0)
    cap = x.__dlpack__(max_version=(1, 0))
    t = ffikit.from_dlpack(cap)
    assert t.data_ptr() == x.ctypes.data
    with pytest.raises(ValueError, match="already consumed"):
        ffikit.from_dlpack(cap)


def test_deleter_runs_exactly_once_when_the_last_view_goes():
    p = Producer(np.arange(6, dtype=np.float64).reshape(2, 3))
    t = ffikit.from_dlpack(p)
    v = t.transpose(0, 1)
    del t
    gc.collect()
    assert p.deleted == 0
    del v
    assert p.deleted == 1


def test_refused_import_leaves_the_capsule_to_its_owner():
    p = Producer(np.arange(6, dtype=np.float64), ndim=-1)
    cap = p.capsule()
    with pytest.raises(ValueError):
        ffikit.from_dlpack(cap)
    assert p.deleted == 0  # not taken: the producer still owns it
    with pytest.raises(ValueError, match="shape has -1 dimensions"):
        ffikit.from_dlpack(p)


@pytest.mark.parametrize(
    "overrides",
    [{"version": (2, 0)}, {"dtype": (2, 32, 4)}, {"device": (99, 0)}, {"data": 0}, {"ndim": 40}],
)
def test_producers_that_lie_get_clear_errors(overrides):
    p = Producer(np.arange(6, dtype=np.float32), **overrides)
    with pytest.raises((ValueError, TypeError)):
        ffikit.from_dlpack(p)
    assert p.deleted == 0


def test_wrong_capsule_names_and_non_capsules():
    p = Producer(np.arange(2.0))
    with pytest.raises(ValueError, match="not a DLPack capsule"):
        ffikit.from_dlpack(p.capsule(b"something_else"))

    class Liar:
        def __dlpack__(self, **kw):
            return 42

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(TypeError, match="not a DLPack capsule"):
        ffikit.from_dlpack(Liar())


def test_producers_without_max_version_get_a_retry():
    calls = []

    class Old:
        def __init__(self):
            self.x = np.arange(3)

        def __dlpack__(self, stream=None):
            calls.append(stream)
            return self.x.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    o = Old()
    t = ffikit.from_dlpack(o)
    assert t.data_ptr() == o.x.ctypes.data and calls == [None]


def test_requirements_on_import():
    x = np.arange(10, dtype=np.int8)[1:]
    with pytest.raises(ValueError):
        ffikit.from_dlpack(x, require_alignment=64)
    with pytest.raises(ValueError):
        ffikit.from_dlpack(np.arange(10)[::2], require_contiguous=True)
    assert ffikit.from_dlpack(np.arange(4), require_contiguous=True).numel() == 4
    with pytest.raises(ValueError, match=r"^from_dlpack: required alignment 3 is not a power of two$"):
        ffikit.from_dlpack(np.arange(4), require_alignment=3)
    with pytest.raises(ValueError, match=r"^from_dlpack: require_alignment -4 is negative$"):
        ffikit.from_dlpack(np.arange(4), require_alignment=-4)


def _c_array(values):
    import ctypes

    return (ctypes.c_int64 * max(len(values), 1))(*values)


# Each layout the one-pass C import takes (compact, NULL strides, float8) and each it leaves
# to the general import (strided, a size-one dimension's odd stride, byte_offset, another
# device, packed float4, read-only flag): every field arrives as the producer gave it.
@pytest.mark.parametrize(
    "overrides, strides",
    [
        ({}, (3, 1)),
        ({"strides": None}, (3, 1)),
        ({"dtype": (10, 8, 1)}, (3, 1)),  # float8_e4m3fn
        ({"strides": _c_array([1, 2])}, (1, 2)),
        ({"shape": _c_array([1, 3]), "strides": _c_array([99, 1])}, (99, 1)),
        ({"byte_offset": 8}, (3, 1)),
        ({"device": (2, 0)}, (3, 1)),
        ({"dtype": (17, 4, 2)}, (3, 1)),  # float4_e2m1fn_x2
        ({"flags": 1}, (3, 1)),  # DLPACK_FLAG_BITMASK_READ_ONLY
    ],
    ids=["compact", "null-strides", "float8", "column-major", "size-one-stride", "byte-offset", "cuda", "float4x2",
         "read-only"],
)
def test_every_import_layout_keeps_the_producers_fields(overrides, strides):
    a = np.zeros((2, 3), dtype=np.float64)
    p = Producer(a, **overrides)
    t = ffikit.from_dlpack(p)
    shape = tuple(overrides["shape"][:2]) if "shape" in overrides else (2, 3)
    assert t.shape == shape and t.strides == strides
    assert t.byte_offset == overrides.get("byte_offset", 0)
    assert t.__dlpack_device__() == overrides.get("device", (1, 0))
    assert t.is_read_only == (overrides.get("flags", 0) == 1)
    assert str(t.dtype) == {10: "float8_e4m3fn", 17: "float4_e2m1fnx2"}.get(overrides.get("dtype", (2,))[0], "float64")
    del t
    assert p.deleted == 1


def test_dlpack_on_the_instance_is_the_one_called():
    # __dlpack__ is called on the method the class lookup found only where no instance
    # attribute can shadow it (no __dict__); an instance's own attribute still wins.
    x = np.arange(3.0)

    class Shadowed:
        def __dlpack__(self, **kw):
            raise AssertionError("the class's __dlpack__ was called, not the instance's")

    s = Shadowed()
    s.__dlpack__ = lambda **kw: x.__dlpack__(**kw)
    assert ffikit.from_dlpack(s).data_ptr() == x.ctypes.data

    class Slotted:
        __slots__ = ("calls",)

        def __init__(self):
            self.calls = []

        def __dlpack__(self, **kw):
            self.calls.append(kw)
            return x.__dlpack__(**kw)

    o = Slotted()
    assert ffikit.from_dlpack(o).data_ptr() == x.ctypes.data
    assert o.calls == [{"max_version": (1, 1)}]


def test_the_exchange_table_is_looked_up_for_each_class_in_turn():
    # The class met last is cached in front of the per-class table: alternating a class
    # with a table (ffikit.Tensor's, which refuses anything else) and numpy's finds each.
    class Borrowed:
        __dlpack_c_exchange_api__ = ffikit.Tensor.__dlpack_c_exchange_api__

        def __dlpack__(self, **kw):
            raise AssertionError("the exchange table should have been used")

    x = np.arange(4, dtype=np.int32)
    for _ in range(2):
        with pytest.raises(TypeError, match="expected an ffikit.Tensor, got Borrowed"):
            ffikit.from_dlpack(Borrowed())
        assert ffikit.from_dlpack(x).data_ptr() == x.ctypes.data


def test_tensor_wrappers_are_not_tracked_by_the_gc():
    # A Tensor holds no Python object: it can never be in a cycle, so the collector skips it,
    # and it still dies (and releases the producer) with its last reference.
    import weakref

    p = Producer(np.arange(6.0))
    t = ffikit.from_dlpack(p)
    assert not gc.is_tracked(t) and not gc.is_tracked(t[1:])
    r = weakref.ref(t)
    del t
    assert r() is None and p.deleted == 1


def test_export_keywords_follow_the_array_api():
    t = ffikit.from_dlpack(np.arange(6, dtype=np.float32))
    assert t.__dlpack_device__() == (1, 0)
    assert "dltensor_versioned" in repr(t.__dlpack__(max_version=(1, 0)))
    assert '"dltensor"' in repr(t.__dlpack__())
    with pytest.raises(BufferError, match="another device|does not move"):
        t.__dlpack__(dl_device=(2, 0))
    assert "dltensor" in repr(t.__dlpack__(dl_device=(1, 0)))
    with pytest.raises(ValueError, match="stream must be None for a tensor on cpu, got 5"):
        t.__dlpack__(stream=5)  # a bad argument, not data that cannot be exported: C's ValueError
    copied = np.from_dlpack(ffikit.from_dlpack(t.__dlpack__(max_version=(1, 0), copy=True)))
    assert copied.ctypes.data != t.data_ptr() and np.array_equal(copied, np.arange(6, dtype=np.float32))


def test_arguments_with_dlpack_arrive_as_tensors_without_a_copy():
    x = np.arange(8, dtype=np.int64)
    out = testing.schema_id_tensor(x)
    assert isinstance(out, ffikit.Tensor) and out.data_ptr() == x.ctypes.data
    arr = testing.make_array_with_tensor(x)
    assert isinstance(arr[0], ffikit.Tensor) and arr[0].data_ptr() == x.ctypes.data
    m = testing.make_map_with_tensor(out)
    assert m["tensor"].same_as(out)
    assert testing.make_dict_with_tensor(out)["tensor"].same_as(out)
    assert testing.make_list_with_tensor(out, 1)[0].same_as(out)


@pytest.mark.parametrize("name", list(layouts()))
def test_buffer_protocol_matches_memoryview_and_asarray(name):
    x = layouts()[name]
    t = ffikit.from_dlpack(x)
    m = memoryview(t)
    assert m.shape == x.shape and m.format == "f" if x.dtype == np.float32 else True
    assert m.strides == x.strides or x.size == 0
    a = np.asarray(t)
    assert np.array_equal(a, x)
    if x.size:
        assert a.ctypes.data == x.ctypes.data


def test_buffer_of_a_size_one_dimension_with_a_huge_stride():
    # Found by fuzz_dlpack (UBSan): the buffer's byte strides are element strides times the
    # item size, which overflowed for a stride no two elements are apart by (here the only
    # element of a size-1 dimension; an import accepts it since the element fits).
    import ctypes

    x = np.arange(1, dtype=np.int64) + 7
    p = Producer(x, strides=(ctypes.c_int64 * 1)(2**62 + 1))
    t = ffikit.from_dlpack(p.capsule())
    assert t.strides == (2**62 + 1,)
    m = memoryview(t)
    assert m.shape == (1,) and m.strides == (0,) and m.tolist() == [7]
    m.release()
    del t
    assert p.deleted == 1


def test_tensor_from_buffer_is_zero_copy_and_keeps_the_owner():
    buf = bytearray(range(16))
    t = ffikit.Tensor.from_buffer(buf)
    assert t.shape == (16,) and t.dtype == "uint8"
    np.asarray(t)[0] = 99
    assert buf[0] == 99
    x = np.arange(6, dtype=np.float64).reshape(2, 3)[:, ::2]
    v = ffikit.Tensor.from_buffer(x)
    assert v.data_ptr() == x.ctypes.data and v.strides == (3, 2)
    ro = ffikit.Tensor.from_buffer(b"abcd")
    assert ro.is_read_only


def test_tensor_from_buffer_takes_cs_dimension_limit_before_copying_the_shape():
    # ffk_tensor_check_shape words it, as for empty / reshape / Rust's from_slice.
    x = np.zeros((1,) * 33, dtype=np.float32)
    with pytest.raises(ValueError, match=r"^from_buffer: shape has 33 dimensions; a tensor has 0 to 32$"):
        ffikit.Tensor.from_buffer(x)
    assert ffikit.Tensor.from_buffer(np.zeros((1,) * 32, dtype=np.float32)).ndim == 32


def test_views_share_storage():
    t = ffikit.zeros((4, 6), "float32")
    row = t[1]
    row.fill_(2.0)
    assert np.from_dlpack(t)[1].tolist() == [2.0] * 6
    assert t[1:3].shape == (2, 6) and t[::2].strides == (12, 1)
    assert t.slice(1, 0, None, 3).shape == (4, 2)
    assert t.permute(1, 0).shape == (6, 4) and t.transpose(0, 1).strides == (1, 6)
    assert t.unsqueeze(0).shape == (1, 4, 6) and t.unsqueeze(0).squeeze(0).shape == (4, 6)
    assert t.reshape(2, 12).shape == (2, 12) and t.reshape((3, -1)).shape == (3, 8)
    assert t.as_strided((2, 2), (1, 1)).shape == (2, 2)
    with pytest.raises(ValueError, match="non-contiguous"):
        t.transpose(0, 1).reshape(24)
    c = t.transpose(0, 1).contiguous()
    assert c.is_contiguous() and c.shape == (6, 4)
    d = ffikit.empty((4, 6), "float32")
    d.copy_(np.ones((4, 6), dtype=np.float32))
    assert np.from_dlpack(d).sum() == 24
    with pytest.raises(IndexError):
        t[4]
    assert t.size(-1) == 6 and t.numel() == 24 and t.byte_offset == 0 and t.device == ffikit.Device("cpu")
    assert repr(t) == "float32[4, 6]@cpu:0"


def test_cpu_tensor_pickles_by_value():
    x = np.arange(12, dtype=np.int32).reshape(3, 4).T
    t = ffikit.from_dlpack(x)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        u = pickle.loads(pickle.dumps(t, protocol=protocol))
        assert u.data_ptr() != t.data_ptr() and np.array_equal(np.from_dlpack(u), x)
    assert pickle.loads(pickle.dumps(ffikit.zeros((0, 3), "float64"))).shape == (0, 3)


@needs_torch
def test_torch_round_trip_same_pointer_both_ways():
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()
    t = ffikit.from_dlpack(x)
    assert t.data_ptr() == x.data_ptr() and t.strides == tuple(x.stride())
    y = torch.from_dlpack(t)
    assert y.data_ptr() == x.data_ptr() and y.stride() == x.stride()


@needs_torch
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16",
                                   "float32", "float64", "complex64", "complex128", "uint16", "uint32", "uint64"])
def test_torch_dtypes_cross(dtype):
    x = torch.zeros((2, 3), dtype=getattr(torch, dtype))
    t = ffikit.from_dlpack(x)
    assert t.dtype == dtype and t.data_ptr() == x.data_ptr()
    assert torch.from_dlpack(t).dtype == x.dtype


@needs_torch
def test_torch_tensor_as_an_argument():
    x = torch.ones(5)
    assert testing.schema_id_tensor(x).data_ptr() == x.data_ptr()


def _fake_cuda_tensor():
    """A float32 tensor that says it is on cuda:0 over host memory: ffikit imports it
    without a GPU (its elements must never be touched)."""
    p = Producer(np.arange(6, dtype=np.float32), device=(2, 0))
    return ffikit.from_dlpack(p.capsule()), p


# ---- numpy never wraps a device tensor in an object array --------------------------------------


@pytest.mark.parametrize("convert", [np.asarray, np.array, np.ascontiguousarray])
def test_numpy_refuses_a_cuda_tensor(convert):
    t, _ = _fake_cuda_tensor()
    with pytest.raises(TypeError, match=r"cannot convert a tensor on cuda:0 to a numpy array.*copy_\(t\)"):
        convert(t)
    with pytest.raises(BufferError, match="only host tensors export a buffer"):
        memoryview(t)


def test_numpy_conversion_of_host_tensors_is_unchanged():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = ffikit.from_dlpack(x)
    a = np.asarray(t)
    assert a.ctypes.data == x.ctypes.data and np.array_equal(a, x)
    b = t.__array__(np.float64)
    assert b.dtype == np.float64 and np.array_equal(b, x)
    c = t.__array__(copy=True)
    assert c.ctypes.data != x.ctypes.data and np.array_equal(c, x)
    with pytest.raises(BufferError, match="bfloat16 has no buffer-protocol format"):
        np.asarray(ffikit.zeros((2,), "bfloat16"))


def test_the_suggested_copy_to_the_cpu_works():
    t = ffikit.from_dlpack(np.arange(4, dtype=np.int16))
    c = ffikit.empty(t.shape, t.dtype).copy_(t)
    assert np.array_equal(np.asarray(c), np.arange(4))


def test_numpy_refuses_a_real_cuda_tensor():
    if torch is None or not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine: the fake cuda tensor above stands in for one")
    try:
        t = ffikit.zeros((3,), "float32", device="cuda")
    except RuntimeError as e:
        pytest.skip(f"ffikit cannot use the CUDA device: {e}")
    with pytest.raises(TypeError, match="cannot convert a tensor on cuda:0 to a numpy array"):
        np.asarray(t)
    host = ffikit.empty(t.shape, t.dtype).copy_(t)  # the copy the message suggests
    assert np.array_equal(np.asarray(host), [0, 0, 0])


def test_gpu_round_trips_skip_without_a_device():
    if torch is None or not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine: the CUDA DLPack round trips need one")
    x = torch.arange(6, device="cuda")
    t = ffikit.from_dlpack(x)
    assert t.device.type == "cuda" and torch.from_dlpack(t).data_ptr() == x.data_ptr()


# ---- Shared memory across processes --------------------------------------------------------


def _child_write(t, value):
    np.asarray(t)[1, 2] = value
    return float(np.asarray(t).sum())


def _shm_exists(name: str) -> bool:
    return os.path.exists("/dev/shm/" + name.lstrip("/"))


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_shared_tensor_crosses_processes_by_name(method):
    t = ffikit.empty_shared((2, 3), "float32")
    name = t.shared_name
    assert _shm_exists(name)
    assert len(pickle.dumps(t)) < 300  # a handle, not the bytes
    ctx = multiprocessing.get_context(method)
    p = ctx.Process(target=_child_write, args=(t, 42.0))
    p.start()
    p.join(60)
    assert p.exitcode == 0
    assert np.asarray(t)[1, 2] == 42.0
    del t
    gc.collect()
    assert not _shm_exists(name), "the name stays after every holder let go"


def test_shared_tensor_through_a_process_pool():
    t = ffikit.empty_shared((2, 3), "float32")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as ex:
        assert ex.submit(_child_write, t, 5.0).result(timeout=60) == 5.0
    assert np.asarray(t)[1, 2] == 5.0


def _child_attach_and_die(blob, ready):
    t = pickle.loads(blob)
    ready.set()
    signal.pause()


def test_a_killed_child_does_not_keep_the_name_forever():
    """The child attaches (it is a recorded holder), the parent lets go, the child dies by
    SIGKILL without letting go: the documented policy removes the name all the same."""
    ctx = multiprocessing.get_context("fork")
    t = ffikit.empty_shared((4,), "int32")
    name = t.shared_name
    ready = ctx.Event()
    p = ctx.Process(target=_child_attach_and_die, args=(pickle.dumps(t), ready))
    p.start()
    assert ready.wait(30)
    del t
    gc.collect()
    assert _shm_exists(name)  # the child still holds it
    os.kill(p.pid, signal.SIGKILL)
    p.join(30)
    assert ffikit.sweep_shared() >= 1
    assert not _shm_exists(name)


# ---- The DLPack C exchange API (DLPack 1.3) ----------------------------------------------------


def _exchange_table(cls):
    import ctypes

    from dlpack_producer import DLManagedTensorVersioned

    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    addr = get(cls.__dlpack_c_exchange_api__, b"dlpack_exchange_api")
    # PYFUNCTYPE: the table is called with the GIL held, as the protocol says.
    from_py = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(ctypes.POINTER(DLManagedTensorVersioned)))
    to_py = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLManagedTensorVersioned), ctypes.POINTER(ctypes.py_object))

    class Table(ctypes.Structure):
        _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("prev", ctypes.c_void_p),
                    ("allocator", ctypes.c_void_p), ("from_py", from_py), ("to_py", to_py),
                    ("dltensor_from_py", ctypes.c_void_p), ("stream", ctypes.c_void_p)]

    return Table.from_address(addr), DLManagedTensorVersioned


def test_tensor_offers_the_dlpack_c_exchange_api():
    import ctypes

    table, managed_t = _exchange_table(ffikit.Tensor)
    assert (table.major, table.minor) == (1, 3) and table.prev is None
    t = ffikit.from_dlpack(np.arange(5, dtype=np.int32))
    out = ctypes.POINTER(managed_t)()
    assert table.from_py(t, ctypes.byref(out)) == 0
    assert out.contents.dl_tensor.data == t.data_ptr() and out.contents.dl_tensor.ndim == 1
    back = ctypes.py_object()
    assert table.to_py(out, ctypes.byref(back)) == 0  # takes ownership of the managed tensor
    tensor = back.value
    assert isinstance(tensor, ffikit.Tensor) and tensor.data_ptr() == t.data_ptr()
    ctypes.pythonapi.Py_DecRef(ctypes.py_object(tensor))  # the reference to_py wrote behind ctypes' back


@needs_torch
def test_producers_with_the_exchange_api_skip_the_python_protocol():
    if not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
        pytest.skip("this torch has no __dlpack_c_exchange_api__")

    class NoPythonProtocol(torch.Tensor):
        def __dlpack__(self, *args, **kwargs):
            raise AssertionError("the C exchange API should have been used")

    x = torch.arange(4.0).as_subclass(NoPythonProtocol)
    t = ffikit.from_dlpack(x)
    assert t.data_ptr() == x.data_ptr() and t.shape == (4,)
    assert testing.schema_id_tensor(x).data_ptr() == x.data_ptr()
