"""Python-side object classes: String, Bytes and Shape (builtin subclasses that keep
their C object), the auto-made classes of run-time types, and Module."""
from __future__ import annotations

import json
from typing import Any, Iterable

from . import _core
from ._core import Function, Object


class String(str):
    """A ``str`` that keeps the ffikit String object it came from, so passing it back
    to C costs no copy. ``_ffikit_object`` (also ``_tvm_ffi_cached_object``) is that object."""

    __slots__ = ("_ffikit_object",)
    _ffikit_object: Object

    def __new__(cls, value: str = "") -> String:
        s = str.__new__(cls, value)
        s._ffikit_object = _core._make_string_object(str(value))
        return s

    @property
    def _tvm_ffi_cached_object(self) -> Object:
        return self._ffikit_object

    def __reduce__(self) -> Any:
        # A plain str, as tvm_ffi's String pickles: the C object is not part of the value.
        return (str, (str(self),))


class Bytes(bytes):
    """A ``bytes`` that keeps the ffikit Bytes object it came from (``_ffikit_object``)."""

    _ffikit_object: Object

    def __new__(cls, value: bytes = b"") -> Bytes:
        b = bytes.__new__(cls, value)
        b._ffikit_object = _core._make_string_object(bytes(value))
        return b

    @property
    def _tvm_ffi_cached_object(self) -> Object:
        return self._ffikit_object

    def __reduce__(self) -> Any:
        # Plain bytes, as tvm_ffi's Bytes pickles.
        return (bytes, (bytes(self),))


class Shape(tuple):  # type: ignore[type-arg]
    """An immutable tuple of ints backed by an ffikit Shape object (``_ffikit_object``)."""

    _ffikit_object: Object

    def __new__(cls, dims: Iterable[int] = ()) -> Shape:
        obj = _core._make_shape_object(list(dims))
        s = tuple.__new__(cls, _core._shape_dims(obj))
        s._ffikit_object = obj
        return s

    @property
    def _tvm_ffi_cached_object(self) -> Object:
        return self._ffikit_object

    def __repr__(self) -> str:
        return tuple.__repr__(self)

    def __reduce__(self) -> Any:
        return (Shape, (tuple(self),))


class Module(Object):
    """A library of Functions: a shared library loaded with :func:`load_module`, or the
    functions linked into the process (:func:`system_lib`). ``m.name``, ``m["name"]`` and
    ``m.get_function("name")`` give its Functions; ``get_function_doc`` and
    ``get_function_metadata`` describe them without calling them."""

    __slots__ = ("__dict__",)

    def get_function(self, name: str, query_imports: bool = False) -> Function:
        """The Function the module exports as ``name``.

        Raises AttributeError when the module has no such function. ``query_imports`` is
        accepted for tvm_ffi compatibility: ffikit modules import no other modules.
        """
        return _core._module_get_function(self, name)

    def implements_function(self, name: str, query_imports: bool = False) -> bool:
        """Whether the module exports a function ``name`` (without creating it)."""
        return _core._module_implements_function(self, name)

    def get_function_doc(self, name: str, query_imports: bool = False) -> str | None:
        """The doc string the module exports for ``name``, or None when the function or its
        doc is missing."""
        doc: str | None = _core._module_get_function_doc(self, name)
        return doc

    def get_function_metadata(self, name: str, query_imports: bool = False) -> dict[str, Any] | None:
        """The metadata of the function ``name`` as a dict, or None when the module has no
        such function.

        ``metadata["type_schema"]`` is the signature as a JSON string in tvm_ffi's schema
        form (``{"type": "ffi.Function", "named_args": {"return": [...], "params": [...]}}``;
        ``{"type": "ffi.Function"}`` for an untyped function); typed functions also have
        ``"arity"`` and ``"arg_names"`` (None for an unnamed parameter), and ``"doc"`` is
        there when the function has one.
        """
        text = _core._module_get_function_metadata(self, name)
        if text is None:
            return None
        metadata: dict[str, Any] = json.loads(text)
        return metadata

    def __getitem__(self, name: str) -> Function:
        """``m["name"]``: the Function ``name`` (AttributeError when missing, ValueError for a
        name that is not a str, as tvm_ffi's Module)."""
        if not isinstance(name, str):
            raise ValueError(f"Can only take string as function name, got {type(name).__name__}")
        return self.get_function(name)

    def __getattr__(self, name: str) -> Function:
        if name.startswith("__"):
            raise AttributeError(name)
        f = self.get_function(name)
        self.__dict__[name] = f
        return f

    @property
    def path(self) -> str:
        """The path the module was loaded from ("<system_lib>" for :func:`system_lib`)."""
        return _core._module_path(self)


def load_module(path: Any) -> Module:
    """Loads a shared library of ffikit Functions (the ``ffikit_fn_<name>`` convention).

    Raises RuntimeError for a missing file, a library that is not an ffikit module, or an
    ABI mismatch, with the loader's reason in the message.
    """
    import os

    module: Module = _core._module_load(os.fspath(path))
    return module


def system_lib(symbol_prefix: str = "") -> Module:
    """A Module over the functions linked into the process: ``m["name"]`` finds the symbol
    ``ffikit_fn_<symbol_prefix><name>``, else ``ffikit_fn_<name>``.

    It sees the program's exported symbols and the libraries loaded into the process's
    global scope (linked with the program, or loaded with RTLD_GLOBAL), not modules loaded
    with :func:`load_module`. ``symbol_prefix`` is part of a C identifier (letters, digits,
    ``_``); anything else raises ValueError.
    """
    module: Module = _core._system_lib(symbol_prefix)
    return module


def _make_class(type_key: str, parent: type) -> type:
    """The wrapper class of a type registered at run time, named after its key."""
    name = type_key.rsplit(".", 1)[-1] or type_key
    return type(name, (parent,), {"__slots__": (), "__module__": "ffikit.types", "_type_key": type_key,
                                  "__qualname__": type_key})
