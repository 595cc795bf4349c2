"""Tensor pickling at protocol 5: the bytes travel as one out-of-band PickleBuffer, and
loading wraps the buffer it is given without a copy (keeping it alive and its read-only
flag). Lower protocols, shared memory and device tensors keep their formats. Containers
and reflected objects send one buffer per distinct tensor."""
from __future__ import annotations

import copy
import ctypes
import gc
import pickle
import weakref
from typing import Any, Optional

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ffikit
from ffikit import _tensor
from ffikit.dataclasses import py_class

from dlpack_producer import Producer


def dumps5(obj):
    """The protocol-5 stream of obj and its out-of-band buffers."""
    bufs = []
    return pickle.dumps(obj, protocol=5, buffer_callback=bufs.append), bufs


def address(buf) -> int:
    """The address of the first byte of any buffer (PickleBuffer, bytes, bytearray, memoryview, array)."""
    return np.frombuffer(buf, dtype=np.uint8).ctypes.data


def raw(t: ffikit.Tensor) -> bytes:
    """The bytes of a contiguous host tensor, whatever its dtype (bfloat16 has no buffer format)."""
    assert t.is_contiguous()
    return ctypes.string_at(t.data_ptr(), t.nbytes()) if t.nbytes() else b""


# ---- Out of band, without a copy ----------------------------------------------------------


def test_a_4mib_tensor_goes_out_of_band_as_one_buffer_beside_a_small_stream():
    x = np.arange(1 << 20, dtype=np.float32)  # 4 MiB
    t = ffikit.from_dlpack(x)
    data, bufs = dumps5(t)
    assert len(bufs) == 1 and isinstance(bufs[0], pickle.PickleBuffer)
    assert len(data) < 1024
    assert bufs[0].raw().nbytes == 4 << 20
    assert address(bufs[0]) == t.data_ptr()  # the tensor's own bytes: no copy on the way out
    u = pickle.loads(data, buffers=bufs)
    assert isinstance(u, ffikit.Tensor) and u.shape == (1 << 20,) and u.dtype == "float32" and u.device == t.device
    assert u.data_ptr() == address(bufs[0])  # no copy on the way in
    assert np.array_equal(np.asarray(u), x) and not u.is_read_only
    x[7] = -1.0  # one memory: a write through the source shows in the loaded tensor
    assert np.asarray(u)[7] == -1.0


def test_the_loaded_tensor_wraps_whatever_buffer_it_is_given_without_a_copy():
    t = ffikit.from_dlpack(np.arange(12, dtype=np.int64).reshape(3, 4))
    data, bufs = dumps5(t)
    for buf in (bytearray(bufs[0]), memoryview(bytearray(bufs[0])), np.frombuffer(bytearray(bufs[0]), np.uint8),
                bufs[0]):
        u = pickle.loads(data, buffers=[buf])
        assert u.data_ptr() == address(buf) and u.shape == (3, 4) and u.strides == (4, 1)
        assert np.array_equal(np.asarray(u), np.arange(12).reshape(3, 4))
        np.asarray(u)[0, 0] = 99  # writes land in the buffer
        assert np.frombuffer(buf, np.int64)[0] == 99
        np.asarray(u)[0, 0] = 0


def test_the_loaded_tensor_keeps_its_buffer_alive():
    t = ffikit.from_dlpack(np.arange(1000, dtype=np.float64))
    data, bufs = dumps5(t)
    buf = np.array(bufs[0].raw())  # a copy we can watch: numpy arrays take weak references
    watch = weakref.ref(buf)
    u = pickle.loads(data, buffers=[buf])
    del buf, bufs, t
    gc.collect()
    assert watch() is not None, "the tensor must keep its buffer alive"
    assert np.array_equal(np.asarray(u), np.arange(1000, dtype=np.float64))
    del u
    gc.collect()
    assert watch() is None, "and let it go with the tensor"


def test_the_source_tensor_lives_as_long_as_its_pickle_buffer():
    x = np.arange(64, dtype=np.int32)
    data, bufs = dumps5(ffikit.from_dlpack(x.copy()))  # the source tensor's only reference is in the buffer
    gc.collect()
    u = pickle.loads(data, buffers=bufs)
    del bufs
    gc.collect()
    assert np.array_equal(np.asarray(u), x)  # ASan reads freed memory here if the chain is broken


def test_read_only_buffers_give_read_only_tensors_that_refuse_writes():
    t = ffikit.from_dlpack(np.arange(6, dtype=np.float32))
    data, bufs = dumps5(t)
    frozen = np.array(bufs[0].raw())
    frozen.flags.writeable = False
    for buf in (frozen, bytes(bufs[0].raw()), memoryview(bytes(bufs[0].raw()))):
        u = pickle.loads(data, buffers=[buf])
        assert u.is_read_only and u.data_ptr() == address(buf)
        with pytest.raises(ValueError, match="read-only"):
            u.fill_(1.0)
        with pytest.raises(ValueError, match="read-only"):
            u.copy_(np.zeros(6, np.float32))
        with pytest.raises(TypeError, match="read-only"):
            memoryview(u)[0] = 1.0  # no writable view either
        assert not np.asarray(u).flags.writeable
        assert np.array_equal(np.asarray(u), np.arange(6))


def test_a_read_only_tensor_sends_a_read_only_buffer():
    x = np.arange(6, dtype=np.int16)
    x.flags.writeable = False
    t = ffikit.Tensor.from_buffer(x)
    assert t.is_read_only
    data, bufs = dumps5(t)
    assert bufs[0].raw().readonly
    u = pickle.loads(data, buffers=bufs)
    assert u.is_read_only and u.data_ptr() == t.data_ptr()
    v = pickle.loads(pickle.dumps(t, protocol=5))  # in band: pickle reads a read-only buffer back as bytes
    assert v.is_read_only and np.array_equal(np.asarray(v), x)


def test_in_band_protocol_5_round_trips_and_wraps_what_pickle_read():
    x = np.arange(1 << 16, dtype=np.float32)
    t = ffikit.from_dlpack(x)
    data = pickle.dumps(t, protocol=5)
    assert len(data) > x.nbytes  # the bytes are in the stream
    u = pickle.loads(data)
    assert u.data_ptr() != t.data_ptr() and not u.is_read_only
    assert np.array_equal(np.asarray(u), x)
    np.asarray(u)[0] = 5.0  # its own memory
    assert x[0] == 0.0
    assert pickle.loads(pickle.dumps(t, protocol=pickle.HIGHEST_PROTOCOL)).shape == (1 << 16,)


def test_zero_size_and_0d_tensors():
    for t in (ffikit.zeros((0, 3), "float64"), ffikit.zeros((4, 0, 2), "bfloat16"), ffikit.zeros((0,), "bool")):
        data, bufs = dumps5(t)
        assert len(bufs) == 1 and bufs[0].raw().nbytes == 0
        for u in (pickle.loads(data, buffers=bufs), pickle.loads(data, buffers=[b""]),
                  pickle.loads(pickle.dumps(t, protocol=5))):
            assert u.shape == t.shape and u.dtype == t.dtype and u.numel() == 0
    s = ffikit.from_dlpack(np.array(2.5, dtype=np.float64))
    assert s.ndim == 0
    data, bufs = dumps5(s)
    u = pickle.loads(data, buffers=bufs)
    assert u.ndim == 0 and u.shape == () and u.item() == 2.5 and u.data_ptr() == s.data_ptr()


# ---- Layouts --------------------------------------------------------------------------------


def non_contiguous():
    base = np.arange(24, dtype=np.int32).reshape(4, 6)
    t = ffikit.from_dlpack(base)
    return {
        "transposed": (t.transpose(0, 1), base.T),
        "stepped": (t.slice(0, 0, None, 2).slice(1, 1, None, 3), base[::2, 1::3]),
        "negative strides": (ffikit.Tensor.from_buffer(base[::-1, ::-2]), base[::-1, ::-2]),
    }


@pytest.mark.parametrize("layout", ["transposed", "stepped", "negative strides"])
def test_a_non_contiguous_tensor_is_made_contiguous_once(layout):
    t, expected = non_contiguous()[layout]
    assert not t.is_contiguous()
    data, bufs = dumps5(t)
    assert len(bufs) == 1 and bufs[0].raw().nbytes == expected.nbytes  # its elements, not the whole storage
    assert address(bufs[0]) != t.data_ptr()  # the one copy, made while pickling
    u = pickle.loads(data, buffers=bufs)
    assert u.data_ptr() == address(bufs[0])  # and none while loading
    assert u.is_contiguous() and u.shape == expected.shape
    assert np.array_equal(np.asarray(u), expected)
    assert np.array_equal(np.asarray(pickle.loads(pickle.dumps(t, protocol=5))), expected)


def test_a_contiguous_view_at_an_offset_sends_only_its_own_bytes():
    base = np.arange(24, dtype=np.float32)
    t = ffikit.from_dlpack(base)[8:16]
    assert t.is_contiguous() and t.byte_offset == 32
    data, bufs = dumps5(t)
    assert address(bufs[0]) == t.data_ptr() and bufs[0].raw().nbytes == 32
    assert np.array_equal(np.asarray(pickle.loads(data, buffers=bufs)), base[8:16])


# ---- Checks on loading ----------------------------------------------------------------------


def test_a_misaligned_buffer_is_wrapped_without_a_copy():
    # Dask hands back slices of larger frames, misaligned for the dtype; numpy wraps them as
    # they are, and so does ffikit (its CPU loops read elements at any alignment).
    t = ffikit.from_dlpack(np.arange(6, dtype=np.float64))
    data, bufs = dumps5(t)
    frame = bytearray(1) + bytearray(bufs[0].raw())  # the tensor at byte 1 of a larger frame
    view = memoryview(frame)[1:]
    assert address(view) % 8 != 0
    u = pickle.loads(data, buffers=[view])
    assert u.data_ptr() == address(view) and not u.is_read_only
    assert np.array_equal(np.asarray(u), np.arange(6))
    u.fill_(2.5)  # writes land in the frame itself
    assert np.array_equal(np.frombuffer(bytes(frame[1:]), dtype=np.float64), np.full(6, 2.5))
    frozen = memoryview(bytes(frame))[1:]  # read-only stays read-only
    v = pickle.loads(data, buffers=[frozen])
    assert v.is_read_only and v.data_ptr() == address(frozen) and np.array_equal(np.asarray(v), np.full(6, 2.5))
    b = ffikit.from_dlpack(np.arange(6, dtype=np.uint8))
    data, bufs = dumps5(b)
    odd = memoryview(bytearray(1) + bytearray(bufs[0].raw()))[1:]
    assert pickle.loads(data, buffers=[odd]).data_ptr() == address(odd)


def test_a_buffer_of_the_wrong_length_is_refused_naming_both_lengths():
    t = ffikit.from_dlpack(np.zeros((2, 3), dtype=np.float32))
    data, _ = dumps5(t)
    with pytest.raises(ValueError, match=r"unpickle: the buffer has 23 bytes, but a float32 tensor of shape "
                                         r"\[2, 3\] has 24"):
        pickle.loads(data, buffers=[bytes(23)])
    with pytest.raises(ValueError, match="the buffer has 25 bytes"):
        pickle.loads(data, buffers=[bytearray(25)])
    with pytest.raises(ValueError, match=r"unpickle: shape\[0\] is -1, and a dimension cannot be negative"):
        _tensor._from_pickle_buffer(b"", (-1, 2), "float32", "cpu")
    with pytest.raises(ValueError, match="Invalid dtype"):
        _tensor._from_pickle_buffer(b"", (0,), "flaot32", "cpu")
    with pytest.raises(TypeError):
        _tensor._from_pickle_buffer(object(), (0,), "float32", "cpu")  # not a buffer


# ---- The formats that do not change ---------------------------------------------------------


@pytest.mark.parametrize("protocol", [0, 1, 2, 3, 4])
def test_protocols_0_to_4_give_todays_reduce_tuple(protocol):
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = ffikit.from_dlpack(x)
    expected = (_tensor._from_bytes, (x.tobytes(), (2, 3), "int32", "cpu:0"))
    assert t.__reduce_ex__(protocol) == expected == t.__reduce__()
    u = pickle.loads(pickle.dumps(t, protocol=protocol))
    assert u.data_ptr() != t.data_ptr() and not u.is_read_only and np.array_equal(np.asarray(u), x)
    # Non-contiguous: the bytes of one contiguous copy, as before.
    assert t.transpose(0, 1).__reduce_ex__(protocol)[1][0] == np.ascontiguousarray(x.T).tobytes()


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3fn", "float4_e2m1fn_x2"])
def test_dtypes_without_a_buffer_format_pickle_at_every_protocol(dtype):
    t = ffikit.zeros((2, 3), dtype)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        u = pickle.loads(pickle.dumps(t, protocol=protocol))
        assert u.dtype == t.dtype and u.shape == (2, 3) and raw(u) == bytes(6 * t.dtype.itemsize)


def test_copy_and_deepcopy_are_unchanged():
    t = ffikit.from_dlpack(np.arange(6, dtype=np.float32))
    with pytest.raises(TypeError, match="cannot shallow-copy a `Tensor`"):
        copy.copy(t)
    d = copy.deepcopy(t)  # ffikit.Object's deep copy, which shares a tensor's memory, as before
    assert isinstance(d, ffikit.Tensor) and d.data_ptr() == t.data_ptr()


def test_a_shared_memory_tensor_pickles_by_name_at_protocol_5():
    t = ffikit.empty_shared((2, 3), "float32")
    np.asarray(t)[:] = 7.0
    data, bufs = dumps5(t)
    assert bufs == [] and len(data) < 300  # a name, no bytes
    assert t.__reduce_ex__(5) == t.__reduce__() and t.__reduce_ex__(5)[0] is _tensor._attach_shared
    u = pickle.loads(data)
    assert u.shared_name == t.shared_name and np.array_equal(np.asarray(u), np.full((2, 3), 7.0))
    np.asarray(u)[0, 0] = 1.0
    assert np.asarray(t)[0, 0] == 1.0


def test_a_cuda_tensor_still_refuses_to_pickle():
    p = Producer(np.arange(6, dtype=np.float32), device=(2, 0))  # says cuda:0 over host memory: never touched
    t = ffikit.from_dlpack(p.capsule())
    for protocol in (2, 4, 5):
        with pytest.raises(TypeError, match="only host tensors pickle by value; this one is on cuda:0"):
            pickle.dumps(t, protocol=protocol, **({"buffer_callback": list().append} if protocol == 5 else {}))
    del t
    gc.collect()
    assert p.deleted == 1


def _pinned_memory_works() -> bool:
    try:
        ffikit.empty((1,), "float32", device="cuda_host")
    except RuntimeError:
        return False
    return True


def test_a_cuda_host_tensor_is_copied_into_pinned_memory_or_refused_without_cuda():
    x = np.arange(6, dtype=np.float32)
    p = Producer(x, device=(3, 0))  # cuda_host memory is host memory: readable without a GPU
    t = ffikit.from_dlpack(p.capsule())
    data, bufs = dumps5(t)
    assert len(bufs) == 1 and address(bufs[0]) == t.data_ptr()
    assert t.__reduce_ex__(5)[1][1:] == ((6,), "float32", "cuda_host:0")
    if _pinned_memory_works():
        u = pickle.loads(data, buffers=bufs)
        assert u.device == ffikit.Device("cuda_host") and u.data_ptr() != t.data_ptr()
        assert np.array_equal(np.asarray(u), x)
    else:  # a build without CUDA, or no driver: a clear error naming the device
        with pytest.raises(RuntimeError, match="cuda_host"):
            pickle.loads(data, buffers=bufs)


# ---- Containers -----------------------------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda a, b: ffikit.Array([a, b, a]),
    lambda a, b: ffikit.List([a, b, a]),
    lambda a, b: ffikit.Map({"a": a, "b": b, "c": a}),
    lambda a, b: ffikit.Dict({"a": a, "b": b, "c": a}),
    lambda a, b: ffikit.Array([ffikit.List([a]), ffikit.Map({"x": b}), ffikit.Dict({"y": a})]),
], ids=["Array", "List", "Map", "Dict", "nested"])
def test_containers_send_one_buffer_per_distinct_tensor(make):
    a = ffikit.from_dlpack(np.arange(256, dtype=np.float32))
    b = ffikit.from_dlpack(np.arange(256, dtype=np.int64))
    c = make(a, b)
    data, bufs = dumps5(c)
    assert len(data) < 1024
    assert {address(x) for x in bufs} == {a.data_ptr(), b.data_ptr()}
    back = pickle.loads(data, buffers=bufs)
    tensors = _tensors_in(back)
    assert {x.data_ptr() for x in tensors} == {a.data_ptr(), b.data_ptr()}  # no copies on the way in
    assert len(bufs) == 2  # a tensor reached twice (through two wrappers) is pickled once


@py_class("test_pickle5.Holder")
class Holder(ffikit.Object):
    t: Optional[ffikit.Tensor] = None
    items: Any = None


def test_a_reflected_objects_tensor_fields_go_out_of_band_once():
    t = ffikit.from_dlpack(np.arange(1 << 16, dtype=np.float32))
    obj = Holder(t=t, items=ffikit.List([t, ffikit.Array([t])]))
    data, bufs = dumps5(obj)
    assert len(bufs) == 1 and address(bufs[0]) == t.data_ptr() and len(data) < 1024
    back = pickle.loads(data, buffers=bufs)
    assert back.t.data_ptr() == t.data_ptr() and back.items[0].same_as(back.t) and back.items[1][0].same_as(back.t)


def _tensors_in(x) -> list:
    if isinstance(x, ffikit.Tensor):
        return [x]
    if isinstance(x, (ffikit.Map, ffikit.Dict)):
        return [t for v in x.values() for t in _tensors_in(v)]
    if isinstance(x, (ffikit.Array, ffikit.List)):
        return [t for v in x for t in _tensors_in(v)]
    return []


# ---- Every dtype, shape and layout ----------------------------------------------------------

# name -> (the numpy dtype that holds its bytes, its DLPack (code, bits, lanes) when numpy has no such dtype)
DTYPES = {
    "bool": (np.bool_, None), "int8": (np.int8, None), "int16": (np.int16, None), "int32": (np.int32, None),
    "int64": (np.int64, None), "uint8": (np.uint8, None), "uint16": (np.uint16, None), "uint32": (np.uint32, None),
    "uint64": (np.uint64, None), "float16": (np.float16, None), "float32": (np.float32, None),
    "float64": (np.float64, None), "complex64": (np.complex64, None), "complex128": (np.complex128, None),
    "bfloat16": (np.uint16, (4, 16, 1)), "float8_e3m4": (np.uint8, (7, 8, 1)), "float8_e4m3": (np.uint8, (8, 8, 1)),
    "float8_e4m3b11fnuz": (np.uint8, (9, 8, 1)), "float8_e4m3fn": (np.uint8, (10, 8, 1)),
    "float8_e4m3fnuz": (np.uint8, (11, 8, 1)), "float8_e5m2": (np.uint8, (12, 8, 1)),
    "float8_e5m2fnuz": (np.uint8, (13, 8, 1)), "float8_e8m0fnu": (np.uint8, (14, 8, 1)),
    "float4_e2m1fn_x2": (np.uint8, (17, 4, 2)),
}


@settings(max_examples=100, deadline=None)
@given(dtype=st.sampled_from(sorted(DTYPES)), shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5),
       layout=st.sampled_from(["contiguous", "transposed", "stepped"]), seed=st.integers(0, 2**32 - 1),
       out_of_band=st.booleans())
def test_every_dtype_shape_and_layout_round_trips(dtype, shape, layout, seed, out_of_band):
    storage, code = DTYPES[dtype]
    nbytes = int(np.prod(shape)) * np.dtype(storage).itemsize
    x = np.random.default_rng(seed).integers(0, 256, size=nbytes, dtype=np.uint8)
    if storage is np.bool_:
        x &= 1
    x = x.view(storage).reshape(shape)
    p = Producer(x, **({"dtype": code} if code else {}))
    t = ffikit.from_dlpack(p.capsule())
    want = ffikit.dtype(dtype)
    assert (t.dtype.type_code, t.dtype.bits, t.dtype.lanes) == (want.type_code, want.bits, want.lanes)
    if layout == "transposed" and x.ndim >= 2:
        t, x = t.transpose(0, x.ndim - 1), x.swapaxes(0, x.ndim - 1)
    elif layout == "stepped" and x.ndim >= 1:
        t, x = t.slice(0, 0, None, 2), x[::2]
    expected = np.ascontiguousarray(x).tobytes()
    bufs = []
    if out_of_band:
        data, bufs = dumps5(t)
        assert len(bufs) == 1 and len(data) < 1024
        u = pickle.loads(data, buffers=bufs)
        assert u.numel() == 0 or u.data_ptr() == address(bufs[0])
    else:
        u = pickle.loads(pickle.dumps(t, protocol=5))
    assert u.dtype == t.dtype and u.shape == t.shape and u.is_contiguous() and u.device == t.device
    assert raw(u) == expected
    del t, u, bufs  # the buffers hold the source tensor
    gc.collect()
    assert p.deleted == 1
