"""Tensor helpers that are simplest in Python: pickling by value, and by shared-memory name.

A CPU tensor pickles by value (its bytes, contiguous). A tensor in shared memory
(``ffikit.empty_shared``) pickles as a handle - name, shape, strides, dtype, offset - so
``multiprocessing`` and ``concurrent.futures`` pass it to another process without
copying: the receiver attaches to the same pages and a write on either side is seen by
the other.

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


def _to_bytes(t: Tensor) -> bytes:
    if t.device.type not in ("cpu", "cuda_host"):
        raise TypeError(f"only host tensors pickle by value; this one is on {t.device}")
    c = t.contiguous()
    return bytes(memoryview(c).cast("B")) if c.numel() else b""


def _from_bytes(data: bytes, shape: tuple[int, ...], dtype: str, device: str) -> Tensor:
    t: Tensor = _core.empty(shape, dtype, device)
    if data:
        src = Tensor.from_buffer(data)
        flat = t.reshape(-1)
        memoryview(flat).cast("B")[:] = memoryview(src).cast("B")
    return t


def _attach_shared(name: str, shape: tuple[int, ...], strides: tuple[int, ...], dtype: str, offset: int) -> Tensor:
    t: Tensor = _core._attach_shared(name, shape, strides, dtype, offset)
    return t


def sweep_shared() -> int:
    """Unlinks every ffikit shared-memory segment whose holders have all exited; returns how many."""
    n: int = _core._sweep_shared()
    return n
