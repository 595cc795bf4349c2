"""ffikit values in Dask distributed: a serializer of Dask's "dask" family for ffikit.Object.

Dask moves a value with pickle (protocol 5, its buffers out of band) when it talks to a
worker directly, but its scheduler fixes pickle at protocol 4 for every connection, so a
``client.scatter``/``client.gather`` that goes through the scheduler (the Client's
default) would copy a tensor's bytes into the pickle stream. numpy avoids that with a
serializer of Dask's own "dask" family, which Dask tries before pickle; this module gives
ffikit.Object (tensors, containers, reflected objects, Functions) one too. It is ffikit's
pickle at protocol 5 itself: the stream goes into Dask's header, the out-of-band buffers
(a tensor's bytes) become Dask's frames, and loading wraps the received frames without
copying them, as unpickling does. One rule, the objects' own ``__reduce_ex__``.

ffikit never imports distributed. The serializer is registered when both are imported,
in either order: at ``import ffikit`` when ``distributed.protocol`` is already imported
(as on a Dask worker), else by a one-shot import hook that registers it right after
``distributed.protocol`` is first imported, and then removes itself.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import pickle
import sys
import warnings
from types import ModuleType
from typing import Any, Sequence

from ._core import Object

_PROTOCOL_MODULE = "distributed.protocol"
_registered = False


def _dumps(x: Object) -> tuple[dict[str, Any], list[memoryview]]:
    # distributed's own pickle: plain pickle first, cloudpickle for what plain pickle cannot
    # write (a local or __main__ class held in a container), as Dask's pickle family does.
    # (The ignores keep `mypy --strict` clean with and without distributed installed.)
    from distributed.protocol import pickle as dask_pickle  # type: ignore[import-not-found, unused-ignore]

    frames: list[memoryview] = []
    stream = dask_pickle.dumps(  # type: ignore[no-untyped-call, unused-ignore]
        x, protocol=5, buffer_callback=lambda b: frames.append(b.raw()))
    return {"ffikit-pickle": stream, "writeable": [not f.readonly for f in frames]}, frames


def _loads(header: dict[str, Any], frames: Sequence[Any]) -> Any:
    buffers = []
    for frame, writeable in zip(frames, header["writeable"]):
        view = memoryview(frame)
        # A frame of a read-only value is made read-only (a flag, no copy); a writable one
        # that arrives read-only stays so (no copy either), as Ray's store hands them out.
        buffers.append(view.toreadonly() if not writeable and not view.readonly else view)
    return pickle.loads(header["ffikit-pickle"], buffers=buffers)


def register() -> bool:
    """Registers the serializer with Dask (idempotent); False when distributed is not imported."""
    global _registered
    if _registered:
        return True
    module = sys.modules.get(_PROTOCOL_MODULE)
    if module is None or not hasattr(module, "dask_serialize"):
        return False
    module.dask_serialize.register(Object)(_dumps)
    module.dask_deserialize.register(Object)(_loads)
    _registered = True
    return True


class _RegisterAfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: on the import of distributed.protocol, lets the other finders
    find it and registers the serializer once it has run."""

    def find_spec(self, fullname: str, path: Any, target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != _PROTOCOL_MODULE:
            return None
        _remove_hook()
        spec = importlib.util.find_spec(fullname)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            try:
                register()
            except Exception as e:  # never break distributed's import
                warnings.warn(f"ffikit: could not register its Dask serializer: {e!r}", RuntimeWarning, stacklevel=2)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


_hook = _RegisterAfterImport()


def _remove_hook() -> None:
    try:
        sys.meta_path.remove(_hook)
    except ValueError:
        pass


def _install() -> None:
    """At ``import ffikit``: registers now, or when distributed.protocol is imported."""
    if not register() and _PROTOCOL_MODULE not in sys.modules:
        sys.meta_path.insert(0, _hook)
