"""Python-side object classes: String, Bytes and Shape (builtin subclasses that keep
their C object), the auto-made classes of run-time types, Module, and TypeInfo (what a
class knows of its C type: fields, methods, parent)."""
from __future__ import annotations

import json
from typing import Any, Iterable, cast

from . import _core
from ._core import Function, Object


class String(str):
    """A ``str`` that keeps the ffikit String object it came from, so passing it back
    to C costs no copy. ``_ffikit_object`` (also ``_tvm_ffi_cached_object``) is that object.
    A String can be weakly referenced (``weakref.ref``), as every ffikit object; Bytes and
    Shape cannot (CPython allows no weak reference to a ``bytes`` or ``tuple`` subclass),
    but the object they keep can: ``weakref.ref(b._ffikit_object)``."""

    __slots__ = ("_ffikit_object", "__weakref__")
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
        obj = _core._make_shape_object(dims)  # any iterable of ints but a str or bytes
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


class ObjectConvertible:
    """Base class for Python classes that convert to an ffikit :class:`Object` (tvm_ffi's):
    wherever a value is converted (a call's argument, a container element, ``convert``), an
    instance of a subclass becomes the Object its :meth:`asobject` returns.
    """

    __slots__ = ()

    def asobject(self) -> Object:
        """The Object this value stands for. Subclasses implement it; anything but an
        ffikit Object returned here makes the conversion a TypeError."""
        raise NotImplementedError(f"{type(self).__name__} does not implement asobject()")


def load_module(path: Any, keep_module_alive: bool = True) -> Module:
    """Loads a shared library of ffikit Functions (the ``ffikit_fn_<name>`` convention).

    ``keep_module_alive`` (tvm_ffi's argument and default): the library stays loaded for
    the life of the process, even after the Module and every Function taken from it are
    gone, since objects or callbacks it made may still run its code. With False it is
    unloaded when the last of them goes, unless its init entry ran (such a library is kept
    anyway: what init registered points into it).

    Raises RuntimeError for a missing file, a library that is not an ffikit module, or an
    ABI mismatch, with the loader's reason in the message.
    """
    import os

    module: Module = _core._module_load(os.fspath(path))
    if keep_module_alive:
        _core._module_keep_loaded(module)
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


class TypeInfo:
    """What ffikit knows of the C type behind a class (``cls.__tvm_ffi_type_info__``, as
    tvm_ffi names it): its index and key, its fields and methods (inherited ones
    included, parents' first) and its parent's TypeInfo.

    ``fields`` are the ``ffikit.core.Field`` descriptors the class carries (``name``,
    ``type``, ``__doc__``, ``frozen``, ``default`` ...; ``get(obj)`` / ``set(obj, value)``),
    ``methods`` the ``ffikit.core.Method`` / ``StaticMethod`` ones (``name``, ``__doc__``,
    ``is_static``, ``func``). Both are read from the C registry on each access.
    """

    __slots__ = ("type_index", "type_key", "type_cls")

    def __init__(self, type_index: int, type_cls: type | None) -> None:
        self.type_index = type_index
        self.type_key: str = _core._type_info(type_index)[0]
        self.type_cls = type_cls

    @property
    def fields(self) -> tuple[Any, ...]:
        """The type's fields (``ffikit.core.Field``), inherited ones first."""
        return _core._type_fields(self.type_index)

    @property
    def methods(self) -> tuple[Any, ...]:
        """The type's methods (``ffikit.core.Method`` / ``StaticMethod``), inherited ones first."""
        return _core._type_methods(self.type_index)

    @property
    def parent_type_info(self) -> TypeInfo | None:
        """The parent type's TypeInfo (None for the root, ``ffi.Object``)."""
        parent: int = _core._type_info(self.type_index)[1]
        if parent < 0:
            return None
        cls = _core._class_for(parent)
        info = cls.__dict__.get("__tvm_ffi_type_info__")
        return info if isinstance(info, TypeInfo) else TypeInfo(parent, cls)

    @property
    def is_reflected(self) -> bool:
        """Whether the type describes its fields (``ffk_type_define``)."""
        return bool(_core._type_info(self.type_index)[2])

    @property
    def doc(self) -> str | None:
        """The type's doc text, or None."""
        doc: str | None = _core._type_info(self.type_index)[3]
        return doc

    def __repr__(self) -> str:
        return f"TypeInfo(type_key={self.type_key!r}, type_index={self.type_index})"


def _bind_class(cls: type, type_index: int) -> None:
    """Gives ``cls`` the fields, methods, construction and copy/pickle of its C type."""
    _core._reflect_class(cls, type_index)
    cls.__tvm_ffi_type_info__ = TypeInfo(type_index, cls)  # type: ignore[attr-defined]


_AUTO_DOC = ("Auto-generated fallback class for {key}.\n"
             "This class is generated because the class is not registered.\n"
             "Please do not use this class directly, instead register the class\n"
             "using `register_object` decorator.")


def _make_class(type_key: str, parent: type) -> type:
    """The wrapper class of a type that no class was registered for, named after its key
    (as tvm_ffi names its fallback classes: ``__module__`` is the key's prefix), with the
    type's fields and methods; a subclass of the parent type's class."""
    module, _, name = type_key.rpartition(".")
    index = _core._type_key_to_index(type_key)
    if index is None:  # the C class table asks only for registered types
        raise ValueError(f"Cannot find object type index for {type_key}")
    doc = _AUTO_DOC.format(key=type_key)
    type_doc = _core._type_info(index)[3]
    if type_doc:
        doc = f"{type_doc}\n\n{doc}"
    cls = type(name or type_key, (parent,), {"__slots__": (), "__module__": module or "ffikit.types",
                                             "_type_key": type_key, "__qualname__": type_key, "__doc__": doc,
                                             "__ffi_auto_class__": True})
    _bind_class(cls, index)
    return cls


class WeakRef(Object):
    """A weak handle to an ffikit object that an ffikit field or container can hold.

    ``WeakRef(obj)`` refers to ``obj`` without keeping it alive; calling it gives ``obj``
    back while something else holds it, and ``None`` after (as :func:`weakref.ref` does).
    ffikit counts references and has no cycle collector, so objects that hold each other
    through fields, ``List`` or ``Dict`` are never freed: store a ``WeakRef`` where a
    back reference goes (a child's pointer to its parent). Unlike :class:`weakref.ref`,
    a ``WeakRef`` is an ffikit object: it crosses into C and Rust and can sit in a field
    of type ``Any`` or ``Object``. Two ``WeakRef`` objects are equal when they refer to the
    same object, before and after it is gone, and hash alike.

    Raises TypeError for a target that is not an ffikit object (a plain Python value
    would be converted to a new object that nothing holds).
    """

    __slots__ = ()

    def __new__(cls, target: Any) -> WeakRef:
        return cast("WeakRef", _core._weak_ref_new(target))

    def __init__(self, target: Any) -> None:  # noqa: D107 - built by __new__
        pass

    def __call__(self) -> Any:
        """The target, or None once nothing holds it."""
        return _core._weak_ref_get(self)

    @property
    def alive(self) -> bool:
        """Whether the target is still held (a snapshot: another thread may drop it)."""
        return _core._weak_ref_alive(self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WeakRef):
            return NotImplemented
        return _core._weak_ref_key(self) == _core._weak_ref_key(other)

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash(_core._weak_ref_key(self))

    def __reduce__(self) -> Any:
        raise TypeError("cannot pickle an ffikit.WeakRef: it refers to an object in this process")
