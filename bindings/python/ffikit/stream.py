"""The current stream: which stream ffikit's work on a device goes to, per thread.

ffikit keeps one current stream per (thread, device) in C (``ffikit/stream.h``). Every
ffikit operation on a CUDA device (zeroing new memory, ``fill_``, ``copy_``,
``contiguous``, DLPack ordering) queues its work on the calling thread's current stream
for that device, without waiting for it, so it can be captured in a CUDA graph. A stream
never set is the default (the legacy default stream on CUDA), reported as ``0``.

The API is tvm_ffi's (``ffikit.use_raw_stream`` and the rest are also exported at the
top level, as ``tvm_ffi`` does):

- :class:`StreamContext` / :func:`use_raw_stream`: a ``with`` block in which a raw
  handle (a ``cudaStream_t`` as an int, or a ``ctypes.c_void_p``) is the current stream;
  the one before comes back at exit.
- :func:`use_torch_stream`: the current stream follows ``torch.cuda.current_stream()``,
  optionally entering a torch stream or graph context first (``torch.cuda.stream(s)``,
  ``torch.cuda.graph(g)``).
- :func:`get_raw_stream`: the current stream of a device as an int.

What one thread sets is never seen by another: each thread starts with the default.
"""
from __future__ import annotations

import importlib
import threading
from ctypes import c_void_p
from typing import Any

from . import _core
from ._core import Device

__all__ = ["StreamContext", "TorchStreamContext", "use_raw_stream", "use_torch_stream", "get_raw_stream"]


def _torch() -> Any:
    """torch, imported at first use (``import ffikit`` never loads it). Through importlib, so
    that type checkers of programs using ffikit need no torch stubs."""
    return importlib.import_module("torch")


def _as_device(device: Any) -> Device:
    """An ffikit.Device for a Device or its text ("cuda:0", "cuda")."""
    if isinstance(device, Device):
        return device
    if isinstance(device, str):
        return Device(device)
    raise TypeError(f"device must be an ffikit.Device or a device string such as 'cuda:0', not "
                    f"{type(device).__name__}")


def _as_handle(stream: Any) -> int:
    """The int value of a stream handle: an int, or a ctypes.c_void_p (None is 0)."""
    if isinstance(stream, c_void_p):
        return stream.value or 0
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    raise ValueError("use_raw_stream only accepts an int or a ctypes.c_void_p as the stream handle, not "
                     f"{type(stream).__name__}; use use_torch_stream for a torch.cuda.Stream or torch.cuda.graph")


class StreamContext:
    """A ``with`` block in which ``stream`` is the current stream of ``device``.

    Entering makes ``stream`` (an int handle, or a ``ctypes.c_void_p``) the calling thread's
    current stream for ``device`` (an :class:`ffikit.Device` or a string such as
    ``"cuda:0"``); leaving restores the one that was current before. ffikit never creates,
    keeps alive or destroys the stream: it must outlive the block. The same object may be
    entered again, nested, or from several threads (each restores its own).

    Raises ValueError for a device type that is not a DLPack one or a negative handle,
    TypeError for a device that is neither a Device nor a string.
    """

    def __init__(self, device: Device | str, stream: int | c_void_p) -> None:
        self._handle = _as_handle(stream)
        dev = _as_device(device)
        self.device = dev
        self.device_type = dev.dlpack_device_type()
        self.device_id = dev.index
        self.stream = stream
        self._saved = threading.local()  # per thread: the streams to restore, innermost last

    def __enter__(self) -> StreamContext:
        previous = _core._env_set_current_stream(self.device_type, self.device_id, self._handle)
        stack = getattr(self._saved, "stack", None)
        if stack is None:
            stack = self._saved.stack = []
        stack.append(previous)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        previous = self._saved.stack.pop()
        _core._env_set_current_stream(self.device_type, self.device_id, previous)

    def __repr__(self) -> str:
        return f"StreamContext({self.device!r}, {self._handle:#x})"


class TorchStreamContext:
    """A ``with`` block in which ffikit's current stream is torch's current CUDA stream.

    Made by :func:`use_torch_stream`. Entering first enters ``context`` when one was given
    (``torch.cuda.stream(s)``, ``torch.cuda.graph(g)``: the graph capture's stream becomes
    torch's current stream), then makes ``torch.cuda.current_stream()`` ffikit's current
    stream for that CUDA device. Leaving undoes both, ffikit's first.
    """

    def __init__(self, context: Any = None) -> None:
        self.torch_context = context
        self._saved = threading.local()

    def __enter__(self) -> TorchStreamContext:
        torch = _torch()

        if self.torch_context is not None:
            self.torch_context.__enter__()
        try:
            current = torch.cuda.current_stream()
            index = current.device.index
            ffi_context = StreamContext(Device("cuda", 0 if index is None else index), int(current.cuda_stream))
            ffi_context.__enter__()
        except BaseException as exc:
            if self.torch_context is not None:
                self.torch_context.__exit__(type(exc), exc, exc.__traceback__)
            raise
        stack = getattr(self._saved, "stack", None)
        if stack is None:
            stack = self._saved.stack = []
        stack.append(ffi_context)
        self.ffi_context = ffi_context
        return self

    def __exit__(self, *exc_info: Any) -> Any:
        self._saved.stack.pop().__exit__(*exc_info)
        if self.torch_context is not None:
            return self.torch_context.__exit__(*exc_info)
        return None


def use_raw_stream(device: Device | str, stream: int | c_void_p) -> StreamContext:
    """A :class:`StreamContext`: ``with ffikit.use_raw_stream(dev, handle): ...``.

    ``stream`` is a raw handle (a ``cudaStream_t`` as an int, or a ``ctypes.c_void_p``;
    ``0`` is the default stream). Raises ValueError for anything else (for a
    ``torch.cuda.Stream`` use :func:`use_torch_stream`).
    """
    return StreamContext(device, stream)  # _as_handle raises the ValueError


def use_torch_stream(context: Any = None) -> TorchStreamContext:
    """A ``with`` block in which ffikit's current stream follows torch's.

    ``with ffikit.use_torch_stream():`` uses ``torch.cuda.current_stream()`` as it is;
    ``use_torch_stream(torch.cuda.stream(s))`` enters torch's stream context first, and
    ``use_torch_stream(torch.cuda.graph(g))`` a CUDA graph capture, so ffikit's work inside
    is captured in ``g``. Raises ImportError when torch is not installed.
    """
    try:
        _torch()  # only to fail early and clearly
    except ImportError as exc:
        raise ImportError("use_torch_stream needs torch, which cannot be imported "
                          "(use use_raw_stream with a raw stream handle instead)") from exc
    return TorchStreamContext(context)


def get_raw_stream(device: Device | str) -> int:
    """The calling thread's current stream for ``device`` as an int (0: the default stream)."""
    dev = _as_device(device)
    stream: int = _core._env_get_current_stream(dev.dlpack_device_type(), dev.index)
    return stream
