"""The global Function registry: names every language can look up."""
from __future__ import annotations

import json
import sys
from typing import Any, Callable, overload

from . import _core
from ._core import Function, list_global_func_names, remove_global_func


@overload
def register_global_func(name: str, f: None = None, override: bool = False) -> Callable[[Callable[..., Any]], Function]: ...
@overload
def register_global_func(name: str, f: Callable[..., Any], override: bool = False) -> Function: ...


def register_global_func(name: str, f: Callable[..., Any] | None = None, override: bool = False) -> Any:
    """Registers ``f`` (a callable or a Function) under ``name``; returns the Function.

    Without ``f`` it is a decorator. An existing name raises RuntimeError unless
    ``override`` is true.
    """
    if not isinstance(name, str):
        raise TypeError(f"register_global_func: name must be a str, got {type(name).__name__}")
    if f is None:
        def register(func: Callable[..., Any]) -> Function:
            return _core._register_global_func(name, func, override)

        return register
    return _core._register_global_func(name, f, override)


def get_global_func(name: str, allow_missing: bool = False) -> Function | None:
    """The Function registered as ``name``; ValueError "Cannot find global function <name>",
    or None when ``allow_missing``."""
    return _core._get_global_func(name, allow_missing)


def get_global_func_metadata(name: str) -> dict[str, Any]:
    """The metadata of the global Function ``name`` as a dict (the JSON text the C library
    writes, parsed): ``"type_schema"`` (the signature as a JSON string in tvm_ffi's schema
    form; ``{"type": "ffi.Function"}`` for an untyped Function), ``"name"``, for typed
    Functions ``"arity"`` and ``"arg_names"`` (None for an unnamed parameter), and
    ``"doc"`` when the Function has one.

    Raises RuntimeError when no Function is registered as ``name`` (as tvm_ffi does).
    """
    metadata: dict[str, Any] = json.loads(_core._global_func_metadata(name))
    return metadata


def init_ffi_api(namespace: str, target_module_name: str | None = None) -> None:
    """Fills a Python module with the global Functions registered under ``namespace``.

    Each Function ``<namespace>.<name>`` (``name`` without further dots) becomes the
    attribute ``name`` of the module ``target_module_name`` (default: the module named
    ``namespace``), which must already be imported. The usual pattern is a ``_ffi_api.py``::

        import ffikit
        ffikit.init_ffi_api("mypackage", __name__)

    after which ``_ffi_api.func(...)`` calls ``mypackage.func``. ``python -m
    ffikit.stubgen mypackage. -o _ffi_api.pyi`` writes the matching type stub.
    """
    target = sys.modules[target_module_name if target_module_name else namespace]
    prefix = namespace + "."
    for full_name in list_global_func_names():
        if not full_name.startswith(prefix):
            continue
        name = full_name[len(prefix):]
        if not name or "." in name:
            continue
        f = _core._get_global_func(full_name, True)
        if f is not None:  # removed since the names were listed
            setattr(target, name, f)


__all__ = ["register_global_func", "get_global_func", "remove_global_func", "list_global_func_names",
           "get_global_func_metadata", "init_ffi_api"]
