"""The current stream (ffikit.stream) and the DLPack stream protocol on both sides.

Without a GPU: the stream API on any device with dummy handles (as tvm_ffi's own tests
run it), thread isolation, the validation of ``__dlpack__(stream=)``, the ``stream=`` an
import passes to a producer and the C exchange API's ``current_work_stream`` both ways,
with CUDA-device tensors that a ctypes producer makes over host memory (ffikit imports them without touching a device). With a GPU
(torch with CUDA and an ffikit built with CUDA): the side-stream races both ways, the
exchange API path, a CUDA graph capture with ffikit work in it and ``copy=True``.
"""
from __future__ import annotations

import ctypes
import sys
import threading
import types

import numpy as np
import pytest

import ffikit
from ffikit import _core

from dlpack_producer import DLManagedTensorVersioned, Producer

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

CUDA = ffikit.device("cuda:0")
CUDA_TYPE = 2  # kDLCUDA


def fake_cuda_tensor(n: int = 6) -> tuple[ffikit.Tensor, Producer]:
    """A float32 tensor that says it is on cuda:0 over host memory (never touch its elements)."""
    p = Producer(np.arange(n, dtype=np.float32), device=(CUDA_TYPE, 0))
    return ffikit.from_dlpack(p.capsule()), p


# ---- The current stream: set, get, restore -------------------------------------------------


def test_raw_stream_nests_and_restores():
    s1, s2 = 123456789, 987654321
    assert ffikit.get_raw_stream(CUDA) == 0
    with ffikit.use_raw_stream(CUDA, s1):
        assert ffikit.get_raw_stream(CUDA) == s1
        assert _core._env_get_current_stream(CUDA.dlpack_device_type(), CUDA.index) == s1
        with ffikit.use_raw_stream(CUDA, s2):
            assert ffikit.get_raw_stream(CUDA) == s2
        assert ffikit.get_raw_stream(CUDA) == s1
    assert ffikit.get_raw_stream(CUDA) == 0


def test_streams_are_per_device():
    with ffikit.use_raw_stream("cuda:1", 11), ffikit.use_raw_stream("cpu", 22):
        assert ffikit.get_raw_stream("cuda:1") == 11
        assert ffikit.get_raw_stream("cpu:0") == 22
        assert ffikit.get_raw_stream("cuda:0") == 0
    assert ffikit.get_raw_stream("cuda:1") == 0 and ffikit.get_raw_stream("cpu") == 0


def test_devices_as_device_objects_or_strings():
    with ffikit.use_raw_stream("cuda", 5):  # "cuda" is cuda:0
        assert ffikit.get_raw_stream(ffikit.device("cuda", 0)) == 5
        assert ffikit.get_raw_stream(ffikit.Device("cuda:0")) == 5
    with pytest.raises(TypeError, match="device must be an ffikit.Device or a device string.*not int"):
        ffikit.get_raw_stream(2)
    with pytest.raises(ValueError, match="gpu"):
        ffikit.use_raw_stream("gpu:0", 1)


def test_ctypes_handles_are_accepted():
    with ffikit.use_raw_stream(CUDA, ctypes.c_void_p(0xABC)):
        assert ffikit.get_raw_stream(CUDA) == 0xABC
        with ffikit.use_raw_stream(CUDA, ctypes.c_void_p(None)):  # NULL: the default stream
            assert ffikit.get_raw_stream(CUDA) == 0
        assert ffikit.get_raw_stream(CUDA) == 0xABC


def test_use_raw_stream_takes_only_handles():
    for bad in ["1", 1.5, None, True, object()]:
        with pytest.raises(ValueError, match="use_raw_stream only accepts an int or a ctypes.c_void_p.*use_torch_stream"):
            ffikit.use_raw_stream(CUDA, bad)
    assert ffikit.get_raw_stream(CUDA) == 0


def test_env_set_current_stream_returns_the_previous_one():
    t, i = CUDA.dlpack_device_type(), CUDA.index
    assert _core._env_set_current_stream(t, i, 77) == 0
    try:
        assert _core._env_set_current_stream(t, i, 88) == 77
        assert _core._env_get_current_stream(t, i) == 88
    finally:
        assert _core._env_set_current_stream(t, i, None) == 88
    assert _core._env_get_current_stream(t, i) == 0


BAD_SET_ARGUMENTS = [
    ((99, 0, 1), ValueError, "unknown device type 99"),
    ((2, -1, 1), ValueError, "device id -1 is negative"),
    ((2, 0, -1), ValueError, "stream handle -1 is negative"),
    ((2, 0, 2**64), OverflowError, "stream handle 18446744073709551616 is too large"),
    ((2, 0, "s"), TypeError, "a stream handle must be an int.*not str"),
    ((2.0, 0, 1), TypeError, "device_type must be an int, not float"),
    ((2, 2**40, 1), OverflowError, "device_id 1099511627776 is out of range"),
]


def test_env_set_current_stream_names_bad_arguments():
    for args, exc, message in BAD_SET_ARGUMENTS:
        with pytest.raises(exc, match=message):
            _core._env_set_current_stream(*args)
    assert ffikit.get_raw_stream(CUDA) == 0


def test_handles_up_to_the_pointer_size():
    with ffikit.use_raw_stream(CUDA, 2**64 - 1):
        assert ffikit.get_raw_stream(CUDA) == 2**64 - 1


def test_a_failing_block_restores_the_stream():
    with pytest.raises(KeyError):
        with ffikit.use_raw_stream(CUDA, 42):
            raise KeyError("inside")
    assert ffikit.get_raw_stream(CUDA) == 0


def test_one_context_object_entered_twice_and_from_two_threads():
    ctx = ffikit.StreamContext(CUDA, 9)
    assert ctx.device_type == CUDA_TYPE and ctx.device_id == 0 and ctx.stream == 9
    with ctx:
        with ctx:
            assert ffikit.get_raw_stream(CUDA) == 9
        assert ffikit.get_raw_stream(CUDA) == 9
    assert ffikit.get_raw_stream(CUDA) == 0

    inside, release, seen = threading.Barrier(2), threading.Event(), []

    def worker():
        with ctx:
            inside.wait(10)
            release.wait(10)
            seen.append(ffikit.get_raw_stream(CUDA))
        seen.append(ffikit.get_raw_stream(CUDA))

    th = threading.Thread(target=worker)
    th.start()
    with ctx:
        inside.wait(10)
    release.set()  # the main thread left first: the worker's restore is its own
    th.join(10)
    assert seen == [9, 0] and ffikit.get_raw_stream(CUDA) == 0


def test_each_thread_sees_its_own_stream():
    n = 4
    all_set, results = threading.Barrier(n + 1), {}

    def worker(k):
        assert ffikit.get_raw_stream(CUDA) == 0  # a new thread starts with the default
        with ffikit.use_raw_stream(CUDA, 1000 + k):
            all_set.wait(10)  # every thread has set its own before any reads
            results[k] = ffikit.get_raw_stream(CUDA)
            all_set.wait(10)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(n)]
    for th in threads:
        th.start()
    with ffikit.use_raw_stream(CUDA, 7):
        all_set.wait(10)
        all_set.wait(10)
        assert ffikit.get_raw_stream(CUDA) == 7
    for th in threads:
        th.join(10)
    assert results == {k: 1000 + k for k in range(n)}


def test_exported_at_the_top_level_as_tvm_ffi_does():
    from ffikit import stream

    for name in ("StreamContext", "use_raw_stream", "use_torch_stream", "get_raw_stream"):
        assert getattr(ffikit, name) is getattr(stream, name) and name in ffikit.__all__


# ---- use_torch_stream, with a stand-in for torch ----------------------------------------------


class _FakeStream:
    def __init__(self, handle, index):
        self.cuda_stream = handle
        self.device = types.SimpleNamespace(type="cuda", index=index)


def _fake_torch(current):
    """A module with torch.cuda.current_stream() (enough for use_torch_stream) and a log."""
    log = []
    fake = types.ModuleType("torch")
    fake.cuda = types.SimpleNamespace(current_stream=lambda: current[-1])

    class Ctx:  # torch.cuda.stream(s) / torch.cuda.graph(g): makes s torch's current stream
        def __init__(self, s):
            self.s = s

        def __enter__(self):
            log.append("enter")
            current.append(self.s)
            return self

        def __exit__(self, *exc):
            log.append(("exit", ffikit.get_raw_stream("cuda:1")))  # ffikit's was restored first
            current.pop()
            return False

    return fake, Ctx, log


def test_use_torch_stream_follows_the_current_torch_stream(monkeypatch):
    current = [_FakeStream(0x1111, 1)]
    fake, ctx, log = _fake_torch(current)
    monkeypatch.setitem(sys.modules, "torch", fake)
    with ffikit.use_torch_stream():
        assert ffikit.get_raw_stream("cuda:1") == 0x1111
        with ffikit.use_torch_stream(ctx(_FakeStream(0x2222, 1))) as c:
            assert ffikit.get_raw_stream("cuda:1") == 0x2222
            assert c.torch_context is not None
        assert log == ["enter", ("exit", 0x1111)]
        assert ffikit.get_raw_stream("cuda:1") == 0x1111
    assert ffikit.get_raw_stream("cuda:1") == 0


def test_use_torch_stream_leaves_torch_context_when_ffikit_fails(monkeypatch):
    current = [_FakeStream(-5, 0)]  # a handle ffikit refuses
    fake, ctx, log = _fake_torch(current)
    monkeypatch.setitem(sys.modules, "torch", fake)
    with pytest.raises(ValueError, match="negative"):
        with ffikit.use_torch_stream(ctx(_FakeStream(-6, 0))):
            pass
    assert log == ["enter", ("exit", 0)] and len(current) == 1


def test_use_torch_stream_without_torch_is_an_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    with pytest.raises(ImportError, match="use_torch_stream needs torch"):
        ffikit.use_torch_stream()


# ---- Export: __dlpack__(stream=) --------------------------------------------------------------


def test_cpu_export_takes_none_or_minus_one():
    t = ffikit.from_dlpack(np.arange(3.0))
    for stream in (None, -1):
        assert np.array_equal(np.from_dlpack(ffikit.from_dlpack(t.__dlpack__(stream=stream))), [0.0, 1.0, 2.0])


def test_cpu_export_refuses_a_stream():
    t = ffikit.from_dlpack(np.arange(3.0))
    for stream in (0, 1, 2, 5, -2):
        with pytest.raises(ValueError, match=f"^stream must be None for a tensor on cpu, got {stream}$"):
            t.__dlpack__(stream=stream)


def test_a_bad_stream_is_refused_before_the_copy():
    # __dlpack__(copy=True) checked the stream only when exporting, after copying: a view
    # whose copy cannot be allocated (8 TiB of one broadcast element) raised MemoryError
    # instead of the stream's error.
    t = ffikit.from_dlpack(np.arange(3.0))
    huge = t.as_strided((2**40,), (0,))
    for stream in (0, 5):
        with pytest.raises(ValueError, match=f"^stream must be None for a tensor on cpu, got {stream}$"):
            huge.__dlpack__(stream=stream, copy=True)
    assert np.array_equal(np.from_dlpack(ffikit.from_dlpack(t.__dlpack__(stream=-1, copy=True))), [0.0, 1.0, 2.0])


def test_export_stream_must_be_an_int():
    t = ffikit.from_dlpack(np.arange(3.0))
    for stream in ("x", 1.0, True, ctypes.c_void_p(1)):
        with pytest.raises(TypeError, match=f"^__dlpack__: stream must be an int or None, not {type(stream).__name__}$"):
            t.__dlpack__(stream=stream)


def test_export_stream_beyond_int64_is_out_of_range():
    t = ffikit.from_dlpack(np.arange(3.0))
    with pytest.raises(ValueError, match=r"^__dlpack__: stream 1180591620717411303424 is out of range$"):
        t.__dlpack__(stream=2**70)


def test_cuda_export_with_nothing_to_order_needs_no_device():
    # None and 1 are the legacy default stream, ffikit's current one here: no event needed.
    t, p = fake_cuda_tensor()
    for stream in (None, -1, 1):
        cap = t.__dlpack__(stream=stream, max_version=(1, 0))
        assert "dltensor_versioned" in repr(cap)
    del cap, t
    assert p.deleted == 1


def test_cuda_export_refuses_ambiguous_streams():
    t, _ = fake_cuda_tensor()
    with pytest.raises(ValueError, match=r"stream 0 is not a valid DLPack stream for a tensor on `cuda:0` \(0 is ambiguous"):
        t.__dlpack__(stream=0)
    with pytest.raises(ValueError, match=r"stream -2 is not a valid DLPack stream for a tensor on `cuda:0`"):
        t.__dlpack__(stream=-2)


# ---- Import: the stream= a producer is given ---------------------------------------------------


def test_cpu_producers_are_given_stream_none():
    p = Producer(np.arange(4, dtype=np.int32))
    with ffikit.use_raw_stream("cpu", 5):  # a CPU "stream" is never passed on
        t = ffikit.from_dlpack(p)
    assert p.streams == [None] and t.numel() == 4


def test_cuda_producers_are_given_ffikit_current_stream():
    p = Producer(np.arange(4, dtype=np.float32), device=(CUDA_TYPE, 0))
    t = ffikit.from_dlpack(p)
    assert p.streams == [1]  # the default stream: 1 (cudaStreamLegacy), never the ambiguous 0
    with ffikit.use_raw_stream(CUDA, 0xBEEF):
        t2 = ffikit.from_dlpack(p)
    with ffikit.use_raw_stream("cuda:1", 0xF00D):  # another device's stream is not ours here
        t3 = ffikit.from_dlpack(p)
    assert p.streams == [1, 0xBEEF, 1]
    assert t.device == CUDA and t2.device == CUDA and t3.device == CUDA
    del t, t2, t3
    assert p.deleted == 3


def test_cuda_producer_without_max_version_still_gets_the_stream():
    calls = []

    class Old:
        def __init__(self):
            self.p = Producer(np.arange(3, dtype=np.float32), device=(CUDA_TYPE, 0))

        def __dlpack__(self, stream=None):
            calls.append(stream)
            return self.p.capsule()

        def __dlpack_device__(self):
            return (CUDA_TYPE, 0)

    with ffikit.use_raw_stream(CUDA, 0x77):
        t = ffikit.from_dlpack(Old())
    assert calls == [0x77] and t.device == CUDA


def test_cuda_producer_that_takes_no_stream_is_not_imported_unordered():
    class NoKeywords:
        def __dlpack__(self):
            raise AssertionError("must not be called without the stream")

        def __dlpack_device__(self):
            return (CUDA_TYPE, 0)

    with pytest.raises(TypeError, match="stream"):
        ffikit.from_dlpack(NoKeywords())


def test_cpu_producer_that_takes_no_keyword_still_works():
    x = np.arange(3)

    class Bare:
        def __dlpack__(self):
            return x.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    assert ffikit.from_dlpack(Bare()).data_ptr() == x.ctypes.data


def test_producer_without_dlpack_device_gets_no_stream_keyword():
    seen = []

    class NoDevice:
        def __dlpack__(self, **kw):
            seen.append(kw)
            return np.arange(2).__dlpack__()

    assert ffikit.from_dlpack(NoDevice()).numel() == 2
    assert seen == [{"max_version": (1, 1)}]


def test_a_bad_dlpack_device_is_named():
    class Bad:
        def __dlpack__(self, **kw):
            raise AssertionError("not reached")

        def __dlpack_device__(self):
            return "cuda"

    with pytest.raises(TypeError, match=r"__dlpack_device__\(\) returned 'cuda', not a \(device_type, device_id\)"):
        ffikit.from_dlpack(Bad())
    for dev, shown in ((("cuda", 0), r"\('cuda', 0\)"), ((2**40, 0), r"\(1099511627776, 0\)"),
                       ((2, 0.5), r"\(2, 0.5\)"), ((2,), r"\(2,\)")):
        Bad.__dlpack_device__ = lambda self, dev=dev: dev  # type: ignore[method-assign]
        with pytest.raises(TypeError, match=shown + ", not a \\(device_type, device_id\\) tuple"):
            ffikit.from_dlpack(Bad())


def test_a_numpy_subclass_is_asked_for_its_device():
    # Exact numpy arrays are known to be on the CPU (no __dlpack_device__ call); a subclass
    # may say otherwise, so it is asked.
    asked = []

    class Sub(np.ndarray):
        def __dlpack_device__(self):
            asked.append(True)
            return super().__dlpack_device__()

    x = np.arange(3.0)
    assert ffikit.from_dlpack(x).data_ptr() == x.ctypes.data
    t = ffikit.from_dlpack(x.view(Sub))
    assert asked == [True] and t.data_ptr() == x.ctypes.data


# ---- The C exchange API (DLPack 1.3) and streams -------------------------------------------------

FROM_PY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(ctypes.POINTER(DLManagedTensorVersioned)))
WORK_STREAM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))


class ExchangeTable(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("prev", ctypes.c_void_p),
                ("allocator", ctypes.c_void_p), ("from_py", FROM_PY), ("to_py", ctypes.c_void_p),
                ("dltensor_from_py", ctypes.c_void_p), ("current_work_stream", WORK_STREAM)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype, _capsule_new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


def exchange_producer_type(producer_stream, with_work_stream=True):
    """A tensor type offering the exchange API over Producer objects; its table reports
    `producer_stream` as its current work stream and logs the calls."""
    log = []

    def from_py(obj, out):
        out[0] = ctypes.pointer(obj.p.managed())
        log.append("from_py")
        return 0

    def work_stream(device_type, device_id, out):
        log.append(("current_work_stream", device_type, device_id))
        out[0] = producer_stream
        return 0

    table = ExchangeTable(major=1, minor=3, from_py=FROM_PY(from_py))
    if with_work_stream:
        table.current_work_stream = WORK_STREAM(work_stream)

    class Framework:
        __dlpack_c_exchange_api__ = _capsule_new(ctypes.addressof(table), b"dlpack_exchange_api", None)
        _keep = (table, from_py, work_stream)  # the type lives in ffikit's cache: so does all this

        def __init__(self, array, device):
            self.p = Producer(array, device=device)

        def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
            log.append(("__dlpack__", stream))
            return self.p.capsule()

        def __dlpack_device__(self):
            return self.p.__dlpack_device__()

    return Framework, log


def test_exchange_api_cpu_tensor_asks_for_no_stream():
    Framework, log = exchange_producer_type(0x5)
    x = Framework(np.arange(3, dtype=np.int64), (1, 0))
    t = ffikit.from_dlpack(x)
    assert log == ["from_py"] and t.data_ptr() == x.p.array.ctypes.data
    del t
    assert x.p.deleted == 1


def test_exchange_api_cuda_tensor_on_the_same_stream_needs_no_event():
    Framework, log = exchange_producer_type(0xABC)
    x = Framework(np.arange(3, dtype=np.float32), (CUDA_TYPE, 0))
    with ffikit.use_raw_stream(CUDA, 0xABC):
        t = ffikit.from_dlpack(x)
    assert log == ["from_py", ("current_work_stream", CUDA_TYPE, 0)] and t.device == CUDA
    del t
    assert x.p.deleted == 1


def test_exchange_api_cuda_tensor_on_another_stream_is_ordered():
    Framework, log = exchange_producer_type(0xABC)
    x = Framework(np.arange(3, dtype=np.float32), (CUDA_TYPE, 0))
    if _cuda_usable():
        pytest.skip("with a GPU, 0xABC is no stream: the ordering is tested with real streams below")
    # Without a GPU the event ffikit records fails: proof that it orders, and that the
    # producer's tensor goes back to it exactly once.
    with pytest.raises(RuntimeError, match="cannot order streams on device `cuda:0`"):
        ffikit.from_dlpack(x)
    assert log == ["from_py", ("current_work_stream", CUDA_TYPE, 0)] and x.p.deleted == 1


def test_exchange_api_without_current_work_stream_falls_back_to_dlpack():
    Framework, log = exchange_producer_type(0, with_work_stream=False)
    x = Framework(np.arange(3, dtype=np.float32), (CUDA_TYPE, 0))
    with ffikit.use_raw_stream(CUDA, 0x99):
        t = ffikit.from_dlpack(x)
    assert log == ["from_py", ("__dlpack__", 0x99)] and t.device == CUDA
    del t
    assert x.p.deleted == 2  # the table's tensor went back at once, the capsule's with t


TO_PY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLManagedTensorVersioned), ctypes.POINTER(ctypes.c_void_p))
_incref = ctypes.pythonapi.Py_IncRef
_incref.restype, _incref.argtypes = None, [ctypes.py_object]


def exchange_round_trip_type(streams):
    """A framework whose table also converts results back (to_py); its current_work_stream
    reports the next value of `streams` at each call. Returns (Framework, Result, log)."""
    log, pending = [], list(streams)

    class Result:
        """The framework's tensor for a managed tensor ffikit handed over."""

        def __init__(self, m):
            self.m = m

        def __del__(self):
            self.m.contents.deleter(self.m)

    def from_py(obj, out):
        out[0] = ctypes.pointer(obj.p.managed())
        log.append("from_py")
        return 0

    def to_py(m, out):
        log.append("to_py")
        r = Result(m)
        _incref(r)  # out[0] is a new reference
        out[0] = id(r)
        return 0

    def work_stream(device_type, device_id, out):
        log.append(("current_work_stream", device_type, device_id))
        out[0] = pending.pop(0)
        return 0

    table = ExchangeTable(major=1, minor=3, from_py=FROM_PY(from_py), current_work_stream=WORK_STREAM(work_stream))
    to_py_fn = TO_PY(to_py)
    table.to_py = ctypes.cast(to_py_fn, ctypes.c_void_p).value

    class Framework:
        __dlpack_c_exchange_api__ = _capsule_new(ctypes.addressof(table), b"dlpack_exchange_api", None)
        _keep = (table, from_py, to_py_fn, work_stream)

        def __init__(self, array, device):
            self.p = Producer(array, device=device)

        def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
            raise AssertionError("the exchange API is used, not __dlpack__")

        def __dlpack_device__(self):
            return self.p.__dlpack_device__()

    return Framework, Result, log


def test_exchange_api_results_on_the_same_stream_go_back_without_an_event():
    Framework, Result, log = exchange_round_trip_type([0xABC, 0xABC])
    x = Framework(np.arange(3, dtype=np.float32), (CUDA_TYPE, 0))
    with ffikit.use_raw_stream(CUDA, 0xABC):
        y = ffikit.testing.echo(x)
    assert isinstance(y, Result)
    assert log == ["from_py", ("current_work_stream", CUDA_TYPE, 0), ("current_work_stream", CUDA_TYPE, 0), "to_py"]
    del y
    assert x.p.deleted == 1


def test_exchange_api_results_are_ordered_before_the_framework_stream():
    Framework, Result, log = exchange_round_trip_type([0xABC, 0xDEF])
    x = Framework(np.arange(3, dtype=np.float32), (CUDA_TYPE, 0))
    if _cuda_usable():
        pytest.skip("with a GPU, 0xDEF is no stream: the ordering is tested with real streams below")
    # ffikit's stream (0xABC) must be ordered before the framework's (0xDEF) before the
    # tensor is handed over: without a GPU the event fails, proving that it is attempted.
    with ffikit.use_raw_stream(CUDA, 0xABC):
        with pytest.raises(RuntimeError, match="cannot order streams on device `cuda:0`"):
            ffikit.testing.echo(x)
    assert log == ["from_py", ("current_work_stream", CUDA_TYPE, 0), ("current_work_stream", CUDA_TYPE, 0)]
    assert x.p.deleted == 1


def test_a_call_with_framework_tensors_runs_on_the_framework_stream():
    """tvm_ffi's rule: a Function given a framework's device tensors runs with the
    framework's current stream as ffikit's (nothing to order), and the stream before comes
    back after the call."""
    Framework, Result, log = exchange_round_trip_type([0xABC, 0xABC])
    seen = []

    def kernel(t):
        seen.append(ffikit.get_raw_stream(CUDA))
        return t

    f = ffikit.convert(kernel)
    x = Framework(np.arange(3, dtype=np.float32), (CUDA_TYPE, 0))
    assert ffikit.get_raw_stream(CUDA) == 0
    y = f(x)
    assert seen == [0xABC] and isinstance(y, Result)
    assert ffikit.get_raw_stream(CUDA) == 0
    assert log == ["from_py", ("current_work_stream", CUDA_TYPE, 0), ("current_work_stream", CUDA_TYPE, 0), "to_py"]
    del y
    assert x.p.deleted == 1


def test_the_framework_stream_is_put_back_when_the_call_fails():
    Framework, Result, log = exchange_round_trip_type([0x77])
    seen = []

    def kernel(t):
        seen.append(ffikit.get_raw_stream(CUDA))
        raise KeyError("inside")

    f = ffikit.convert(kernel)
    x = Framework(np.arange(3, dtype=np.float32), (CUDA_TYPE, 0))
    with ffikit.use_raw_stream(CUDA, 0x55):
        with pytest.raises(KeyError, match="inside"):
            f(x)
        assert seen == [0x77] and ffikit.get_raw_stream(CUDA) == 0x55
    assert ffikit.get_raw_stream(CUDA) == 0 and x.p.deleted == 1


def test_cpu_framework_tensors_leave_the_stream_alone():
    Framework, Result, log = exchange_round_trip_type([])
    seen = []
    f = ffikit.convert(lambda t: seen.append(ffikit.get_raw_stream(CUDA)))
    with ffikit.use_raw_stream(CUDA, 0x55):
        f(Framework(np.arange(3, dtype=np.float32), (1, 0)))
    assert seen == [0x55] and log == ["from_py"]


def test_a_failed_call_runs_a_python_deleter_cleanly():
    """A call that fails releases its argument tensors with its exception set aside, so a
    producer's deleter written in Python (ctypes) runs and the call's own error comes out."""
    p = Producer(np.arange(3, dtype=np.float32))
    with pytest.raises(TypeError):
        ffikit.testing.add_one(p)  # the tensor is no int: the C call fails after the import
    assert p.deleted == 1


def test_ffikit_exchange_api_reports_its_current_stream():
    addr = _capsule_pointer(ffikit.Tensor.__dlpack_c_exchange_api__, b"dlpack_exchange_api")
    fn = ExchangeTable.from_address(addr).current_work_stream
    out = ctypes.c_void_p(123)
    assert fn(CUDA_TYPE, 0, ctypes.byref(out)) == 0 and out.value is None  # the default stream
    with ffikit.use_raw_stream(CUDA, 0xCAFE):
        assert fn(CUDA_TYPE, 0, ctypes.byref(out)) == 0 and out.value == 0xCAFE
        assert fn(CUDA_TYPE, 1, ctypes.byref(out)) == 0 and out.value is None


# ---- With a GPU --------------------------------------------------------------------------------


def _cuda_usable() -> bool:
    try:
        ffikit.empty((1,), "float32", device="cuda")
    except RuntimeError:
        return False
    return True


def _gpu_skip_reason() -> str | None:
    if torch is None:
        return "torch is not installed: the GPU stream tests use torch's streams"
    if not torch.cuda.is_available():
        return "no CUDA device (torch.cuda.is_available() is False)"
    try:
        ffikit.empty((1,), "float32", device="cuda")
    except RuntimeError as e:
        return f"ffikit cannot use the CUDA device: {e}"
    return None


@pytest.fixture
def gpu():
    reason = _gpu_skip_reason()
    if reason is not None:
        pytest.skip(reason)
    torch.cuda.synchronize()
    yield torch
    torch.cuda.synchronize()


N = 1 << 24
SLEEP_CYCLES = 500_000_000  # about a third of a second: far longer than the copy


class DlpackOnly:
    """Hides torch's C exchange API, so import goes through __dlpack__(stream=)."""

    def __init__(self, x):
        self.x = x

    def __dlpack__(self, **kw):
        return self.x.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


@pytest.mark.parametrize("path", ["dlpack", "exchange_api"])
def test_gpu_ffikit_sees_what_torch_wrote_on_a_side_stream(gpu, path):
    if path == "exchange_api" and not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
        pytest.skip("this torch has no __dlpack_c_exchange_api__")
    x = torch.zeros(N, device="cuda")
    d = ffikit.empty((N,), "float32", device="cuda")
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(SLEEP_CYCLES)
        x.fill_(7.0)
        src = ffikit.from_dlpack(x if path == "exchange_api" else DlpackOnly(x))
        d.copy_(src)  # on ffikit's current stream: the default one, not s
    torch.cuda.synchronize()
    assert int((torch.from_dlpack(d) == 7).sum()) == N


def test_gpu_torch_sees_what_ffikit_wrote_on_a_side_stream(gpu):
    d = ffikit.zeros((N,), "float32", device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(SLEEP_CYCLES)
    with ffikit.use_raw_stream("cuda:0", side.cuda_stream):
        d.fill_(7.0)  # queued on side, after the sleep
        y = torch.from_dlpack(d)  # torch passes its current stream; ffikit orders side before it
        count = (y == 7).sum()  # on torch's current stream
    torch.cuda.synchronize()
    assert int(count) == N


def test_gpu_a_function_given_torch_tensors_runs_on_torch_stream(gpu):
    """Without use_torch_stream: a Function called with torch tensors runs on torch's current
    stream, so its copy comes after torch's fill and before torch's read, all on `side`."""
    if not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
        pytest.skip("this torch has no __dlpack_c_exchange_api__")
    x = torch.zeros(N, device="cuda")
    y = torch.zeros(N, device="cuda")
    torch.cuda.synchronize()
    f = ffikit.convert(lambda dst, src: dst.copy_(src) and None)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(SLEEP_CYCLES)
        x.fill_(7.0)
        f(y, x)
        count = (y == 7).sum()
    torch.cuda.synchronize()
    assert int(count) == N


def test_gpu_use_torch_stream_follows_torch(gpu):
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    dev = f"cuda:{torch.cuda.current_device()}"
    with torch.cuda.stream(s1):
        with ffikit.use_torch_stream():
            assert ffikit.get_raw_stream(dev) == s1.cuda_stream
        with ffikit.use_torch_stream(torch.cuda.stream(s2)):
            assert torch.cuda.current_stream() == s2 and ffikit.get_raw_stream(dev) == s2.cuda_stream
        assert torch.cuda.current_stream() == s1 and ffikit.get_raw_stream(dev) == 0


def test_gpu_cuda_graph_captures_ffikit_copy_and_fill(gpu):
    src = torch.arange(4096, device="cuda", dtype=torch.float32).reshape(64, 64)
    dst = torch.zeros(64, 64, device="cuda")
    filled = torch.zeros(64, 64, device="cuda")
    fsrc, fdst, ffilled = ffikit.from_dlpack(src), ffikit.from_dlpack(dst), ffikit.from_dlpack(filled)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with ffikit.use_torch_stream(torch.cuda.graph(g)):
        assert ffikit.get_raw_stream("cuda:0") == torch.cuda.current_stream().cuda_stream != 0
        fdst.copy_(fsrc)  # dense: no host sync and no allocation, so it can be captured
        ffilled.fill_(2.5)
    assert ffikit.get_raw_stream("cuda:0") == 0
    torch.cuda.synchronize()
    assert int(dst.count_nonzero()) == 0 and int(filled.count_nonzero()) == 0  # captured, not run
    src.add_(1)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(dst, src) and bool((filled == 2.5).all())
    src.mul_(2)
    filled.zero_()
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(dst, src) and bool((filled == 2.5).all())


def test_gpu_cuda_graph_captures_a_strided_ffikit_copy(gpu):
    src = torch.arange(4096, device="cuda", dtype=torch.float32).reshape(64, 64)
    dst = torch.zeros(64, 64, device="cuda")
    fsrc, fdst = ffikit.from_dlpack(src), ffikit.from_dlpack(dst)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with ffikit.use_torch_stream(torch.cuda.graph(g)):
        fdst.transpose(0, 1).copy_(fsrc)  # the strided-copy kernel, its arguments by value
    torch.cuda.synchronize()
    assert int(dst.count_nonzero()) == 0
    src.add_(1)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(dst, src.t())


def test_gpu_dlpack_copy_true_copies_on_the_device(gpu):
    t = ffikit.empty((1000,), "float32", device="cuda").fill_(3.0)
    cap = t.__dlpack__(max_version=(1, 0), copy=True, stream=1)
    c = ffikit.from_dlpack(cap)
    assert c.device == t.device and c.data_ptr() != t.data_ptr()
    t.fill_(4.0)
    y = torch.from_dlpack(c)
    torch.cuda.synchronize()
    assert bool((y == 3).all()) and bool((torch.from_dlpack(t) == 4).all())
