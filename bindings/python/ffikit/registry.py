"""The global Function registry (names every language can look up) and the binding of
Python classes to object types (register_object)."""
from __future__ import annotations

import json
import sys
from typing import Any, Callable, TypeVar, overload

from . import _core
from ._core import Function, Object, list_global_func_names, remove_global_func
from ._object import _bind_class

_T = TypeVar("_T", bound=type)


def _register_object(cls: _T, type_key: str) -> _T:
    if not (isinstance(cls, type) and issubclass(cls, Object)):
        raise TypeError(f"register_object: {cls!r} is not a subclass of ffikit.Object")
    type_index = _core._type_key_to_index(type_key)
    if type_index is None:
        raise ValueError(f"Cannot find object type index for {type_key}")
    _bind_class(cls, type_index)
    _core._register_class(type_index, cls)
    return cls


@overload
def register_object(type_key: str | None = None, *, init: bool = True) -> Callable[[_T], _T]: ...
@overload
def register_object(type_key: _T, *, init: bool = True) -> _T: ...


def register_object(type_key: Any = None, *, init: bool = True) -> Any:
    """Binds a Python class (a subclass of :class:`ffikit.Object`) to the object type
    registered in C as ``type_key``; a class decorator, as tvm_ffi's::

        @ffikit.register_object("mylib.Point")
        class Point(ffikit.Object):
            x: int
            y: float

    Bare (``@register_object`` or ``@register_object()``) the key is the class's name.
    Objects of the type, and of its subtypes without a class of their own, come back
    from C as this class. For a reflected type (``ffk_type_define``) the class gets a
    property per field (inherited ones too; ``__doc__`` is the field's doc; setting a
    read-only field raises AttributeError, a value of the wrong type TypeError with C's
    message), its methods (static ones as static methods), construction by the type's
    constructor (``Point(1, y=2.5)``; a class that defines ``__init__`` constructs with
    ``self.__ffi_init__(...)``), ``copy.copy``, ``copy.deepcopy`` and pickling through the
    fields, and ``__tvm_ffi_type_info__`` (a :class:`ffikit.TypeInfo`). What the class
    body defines itself is kept. ``init`` is accepted for tvm_ffi compatibility.

    Raises ValueError "Cannot find object type index for <key>" for an unknown key, and
    TypeError for something that is not a subclass of ffikit.Object.
    """
    if isinstance(type_key, str):
        key: str = type_key

        def with_name(cls: _T) -> _T:
            return _register_object(cls, key)

        return with_name
    if type_key is None:
        def by_class_name(cls: _T) -> _T:
            return _register_object(cls, cls.__name__)

        return by_class_name
    if isinstance(type_key, type):
        return _register_object(type_key, type_key.__name__)
    raise TypeError("type_key must be a string, type, or None")


def get_registered_type_keys() -> list[str]:
    """Every type key registered with ffikit (static types and run-time ones), in type
    index order."""
    keys: list[str] = _core._registered_type_keys()
    return keys


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
           "get_global_func_metadata", "init_ffi_api", "register_object", "get_registered_type_keys"]
