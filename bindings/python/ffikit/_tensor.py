"""Tensor helpers that are simplest in Python: the loaders a pickled tensor names, and the shared-memory sweep.

A host tensor (cpu, cuda_host) pickles by value. At protocol 5 and above (Ray and Dask
pickle at 5 with a ``buffer_callback``; ``pickle.dumps`` defaults to 4 before Python 3.14)
``Tensor.__reduce_ex__`` hands its bytes to the pickler as a ``pickle.PickleBuffer``: with
a ``buffer_callback`` they travel out of band, beside a stream of a few hundred bytes,
and ``pickle.loads(data, buffers=...)`` rebuilds the tensor over the buffer it is given
(a ``PickleBuffer``, ``memoryview``, ``bytes``, ``bytearray``, numpy array, or an engine's
own buffer) without copying it: the tensor keeps the buffer alive and is read-only when
the buffer is (Ray's object store hands out read-only buffers). A tensor that is not
contiguous is made contiguous once while pickling. A buffer whose address is not
aligned for the dtype (a slice of a larger frame, as Dask hands them) is wrapped as it is,
as numpy wraps it: ffikit's CPU loops read elements at any alignment. One case copies once
on loading: a ``cuda_host`` tensor, copied into pinned memory (the device is kept). Without a ``buffer_callback`` the bytes go in band, and loading still wraps
the ``bytearray`` (or, for a read-only tensor, the ``bytes``) that pickle reads them
into. Protocols 0 to 4 keep the older format: the bytes, copied into the stream as
``bytes``, and loaded into a fresh writable tensor (``_from_bytes``). ``copy.copy`` and
``copy.deepcopy`` do not pickle (they are ffikit.Object's). A tensor on a CUDA device
does not pickle (TypeError): copy it to the host first.

A tensor in shared memory (``ffikit.empty_shared``) pickles as a handle at every
protocol - name, shape, strides, dtype, offset - so ``multiprocessing`` and
``concurrent.futures`` pass it to another process without copying: the receiver attaches
to the same pages and a write on either side is seen by the other.

Lifetime of the shared-memory name: every process holding the segment is recorded in
it; the name is unlinked when the last holder lets go. The sender must keep its tensor
alive until the receiver has unpickled it (``multiprocessing`` does while the call is in
flight). A holder killed without letting go (SIGKILL) is pruned by the next process that
creates, attaches or releases that name, and ``ffikit.sweep_shared()`` removes every
segment whose holders have all exited.
"""
from __future__ import annotations

from . import _core
from ._core import Tensor


def _from_bytes(data: bytes, shape: tuple[int, ...], dtype: str, device: str) -> Tensor:
    """Rebuilds a tensor pickled at protocols 0-4: a fresh, writable copy of the bytes."""
    t: Tensor = _core.empty(shape, dtype, device)
    t.copy_(_core._tensor_from_pickle_buffer(data, shape, dtype, "cpu"))  # checks the length; any dtype
    return t


def _from_pickle_buffer(buf: object, shape: tuple[int, ...], dtype: str, device: str) -> Tensor:
    """Rebuilds a tensor pickled at protocol 5 over ``buf`` (see the module docstring)."""
    t: Tensor = _core._tensor_from_pickle_buffer(buf, shape, dtype, device)
    return t


def _attach_shared(name: str, shape: tuple[int, ...], strides: tuple[int, ...], dtype: str, offset: int) -> Tensor:
    t: Tensor = _core._attach_shared(name, shape, strides, dtype, offset)
    return t


def sweep_shared() -> int:
    """Unlinks every ffikit shared-memory segment whose holders have all exited; returns how many."""
    n: int = _core._sweep_shared()
    return n
