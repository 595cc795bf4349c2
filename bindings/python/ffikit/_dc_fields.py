"""Fields of ``ffikit.dataclasses`` classes (part of ffikit.dataclasses, which re-exports
everything here): :class:`Field` and :func:`field`, :data:`MISSING`, ``KW_ONLY``,
:class:`init_property`, :func:`method`, and the C field flags a Field becomes."""
from __future__ import annotations

import dataclasses as _std_dataclasses
import sys
import types
import typing
from typing import Any, Callable, TypeVar, overload

from . import _core

KW_ONLY = _std_dataclasses.KW_ONLY

#: The C field flags (ffikit/reflect.h, FFK_FIELD_*), as _core exports them.
_WRITABLE, _HAS_DEFAULT, _INIT_OFF = _core.FIELD_WRITABLE, _core.FIELD_HAS_DEFAULT, _core.FIELD_INIT_OFF
_KW_ONLY, _REPR_OFF, _COMPARE_OFF = _core.FIELD_KW_ONLY, _core.FIELD_REPR_OFF, _core.FIELD_COMPARE_OFF
_FACTORY, _S_DEF, _S_DEF_SIMPLE = _core.FIELD_DEFAULT_FACTORY, _core.FIELD_S_DEF, _core.FIELD_S_DEF_SIMPLE

class _MissingType:
    """The type of :data:`MISSING`."""

    __slots__ = ()
    _instance: _MissingType | None = None

    def __new__(cls) -> _MissingType:
        if cls._instance is None:
            cls._instance = object.__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<MISSING>"

    def __reduce__(self) -> str:
        return "MISSING"


#: The sentinel for "no default" (``Field.default`` / ``Field.default_factory``).
MISSING: Any = _MissingType()


class FrozenInstanceError(AttributeError):
    """Raised when assigning to a field that a frozen ``c_class`` made read-only in Python
    (py_class fields are read-only in C, which raises its own AttributeError)."""


# ---- Field ------------------------------------------------------------------------------


class Field:
    """One field of a py_class / c_class type, as :func:`fields` returns it.

    ``name`` and ``type`` (the resolved annotation, None when unknown) are filled in by
    the decorator; ``type_text`` is the field's type in C's signature language.
    ``default`` / ``default_factory`` are :data:`MISSING` when not given. ``frozen``: read-only
    after construction; ``init``, ``repr``, ``compare``, ``hash``, ``kw_only``,
    ``metadata`` as the standard library's; ``structural_eq`` None, ``"ignore"`` (left
    out of structural equality and hash), ``"def"`` / ``"def-pattern"`` or
    ``"def-simple"`` (a definition region: see :func:`field`); ``doc`` the field's doc
    text; ``converter`` and ``extra_kwargs`` as :func:`field` takes them.
    """

    __slots__ = ("name", "type", "type_text", "default", "default_factory", "frozen", "init", "repr", "hash",
                 "compare", "kw_only", "metadata", "structural_eq", "doc", "converter", "extra_kwargs")

    _VALID_STRUCTURAL_EQ = (None, "ignore", "def", "def-pattern", "def-simple")

    def __init__(self, name: str | None = None, *, default: Any = MISSING, default_factory: Any = MISSING,
                 frozen: bool = False, init: bool = True, repr: bool = True, hash: bool | None = None,
                 compare: bool = True, kw_only: bool | None = None, metadata: Any = None,
                 structural_eq: str | None = None, doc: str | None = None,
                 converter: Callable[[Any], Any] | None = None, **extra_kwargs: Any) -> None:
        if default_factory is not MISSING:
            if default is not MISSING:
                raise ValueError("cannot specify both default and default_factory")
            if not callable(default_factory):
                raise TypeError(f"default_factory must be a callable, got {type(default_factory).__name__}")
        if structural_eq not in Field._VALID_STRUCTURAL_EQ:
            raise ValueError(f"structural_eq must be one of {sorted(Field._VALID_STRUCTURAL_EQ, key=str)}, "
                             f"got {structural_eq!r}")
        self.name: str = name  # type: ignore[assignment]
        self.type: Any = None
        self.type_text: str | None = None
        self.default = default
        self.default_factory = default_factory
        self.frozen = frozen
        self.init = init
        self.repr = repr
        self.hash = hash
        self.compare = compare
        self.kw_only = kw_only
        self.metadata: types.MappingProxyType[Any, Any] = types.MappingProxyType(dict(metadata) if metadata else {})
        self.structural_eq = structural_eq
        self.doc = doc
        self.converter: Callable[[Any], Any] = _field_converter if converter is None else converter
        self.extra_kwargs: dict[str, Any] = dict(extra_kwargs)

    def __repr__(self) -> str:
        return (f"Field(name={self.name!r},type={self.type!r},type_text={self.type_text!r},"
                f"default={self.default!r},default_factory={self.default_factory!r},frozen={self.frozen!r},"
                f"init={self.init!r},repr={self.repr!r},hash={self.hash!r},compare={self.compare!r},"
                f"kw_only={self.kw_only!r},metadata={self.metadata!r},structural_eq={self.structural_eq!r})")

    def __copy__(self) -> Field:
        c = object.__new__(Field)
        for slot in Field.__slots__:
            setattr(c, slot, getattr(self, slot))
        c.extra_kwargs = dict(self.extra_kwargs)
        return c

    def _flags(self) -> int:
        flags = 0 if self.frozen else _WRITABLE
        if self.default is not MISSING:
            flags |= _HAS_DEFAULT
        if self.default_factory is not MISSING:
            flags |= _HAS_DEFAULT | _FACTORY
        if not self.init:
            flags |= _INIT_OFF
        if self.kw_only:
            flags |= _KW_ONLY
        if not self.repr:
            flags |= _REPR_OFF
        if not self.compare or self.structural_eq == "ignore":
            flags |= _COMPARE_OFF
        if self.structural_eq in ("def", "def-pattern"):
            flags |= _S_DEF
        elif self.structural_eq == "def-simple":
            flags |= _S_DEF_SIMPLE
        return flags


def _field_converter(value: Any) -> Any:
    """The converter a field has when none is given: the value itself. (A field's
    ``converter`` is information for type checkers, named in the decorators'
    ``dataclass_transform`` metadata; at run time C converts every value to the
    field's type.)"""
    return value


def field(*, default: Any = MISSING, default_factory: Any = MISSING, frozen: bool = False, init: bool = True,
          repr: bool = True, hash: bool | None = None, compare: bool = True, kw_only: bool | None = None,
          metadata: Any = None, structural_eq: str | None = None, doc: str | None = None,
          converter: Callable[[Any], Any] = _field_converter, **extra_kwargs: Any) -> Any:
    """Customizes a field of a ``@py_class`` (``x: int = field(default=0, repr=False)``).

    ``default`` / ``default_factory`` (a callable of no arguments, called for each new
    object; not both: ValueError), ``frozen`` (read-only after construction), ``init``
    (a constructor parameter), ``repr``, ``hash`` (None: follows ``compare``),
    ``compare`` (part of ``==``, ordering, and of structural equality and hash),
    ``kw_only`` (None: the decorator's), ``metadata``, ``structural_eq`` and ``doc``.
    ``structural_eq``: None (compared as usual), ``"ignore"`` (left out of structural
    equality and hash only), ``"def"`` / ``"def-pattern"`` (a definition region: the
    ``structural_eq="var"`` objects met inside it, their own fields included, are bound
    to their counterparts, so ``Lambda(x, x + 1)`` equals ``Lambda(y, y + 1)``) or
    ``"def-simple"`` (the same, but a variable's own fields are walked as uses); others
    raise ValueError.
    ``converter`` (a one-argument callable) tells a type checker which values the
    constructor accepts for the field (PEP 681's converter, named in the
    ``dataclass_transform`` metadata); as in tvm_ffi it is not called at run time: C
    converts each value to the field's type. Other keyword options are kept in
    ``Field.extra_kwargs`` for extensions; ``py_class`` raises TypeError naming any it
    finds there.
    Returns a :class:`Field` the decorator completes.
    """
    return Field(default=default, default_factory=default_factory, frozen=frozen, init=init, repr=repr, hash=hash,
                 compare=compare, kw_only=kw_only, metadata=metadata, structural_eq=structural_eq, doc=doc,
                 converter=converter, **extra_kwargs)


_V = TypeVar("_V")


class init_property(typing.Generic[_V]):
    """A field of a ``@py_class`` computed once from the other fields when an object is
    built by the generated constructor (tvm_ffi's ``init_property``)::

        @py_class
        class Rect(Object):
            w: int
            h: int

            @init_property
            def area(self) -> int:
                return self.w * self.h

    The decorated method's return annotation (``Any`` without one) is the field's type.
    The field is stored in C like any other (C and Rust read it by name) and is left
    out of ``__init__``, ``repr``, ``==``, ``hash`` and structural equality and hash
    (``field(init=False, repr=False, compare=False, hash=False,
    structural_eq="ignore")``). The generated constructor sets it after C has built the
    object and before ``__post_init__``, parents' properties first; a frozen class's
    too. A class with its own ``__init__`` (which calls ``self.__ffi_init__``) leaves
    it unset, as tvm_ffi does. Reading the name on the class before ``py_class`` runs
    gives the ``init_property`` itself.
    """

    def __init__(self, func: Callable[[Any], _V]) -> None:
        if not callable(func):
            raise TypeError(f"init_property: expected a callable, got {type(func).__name__}")
        self.func = func
        self.name: str | None = None
        if sys.version_info >= (3, 14):
            import annotationlib  # type: ignore[import-not-found]

            anns = annotationlib.get_annotations(func, format=annotationlib.Format.FORWARDREF)
        else:
            anns = getattr(func, "__annotations__", {})
        self._annotation: Any = anns.get("return")

    @overload
    def __get__(self, obj: None, owner: type) -> init_property[_V]: ...
    @overload
    def __get__(self, obj: object, owner: type) -> _V: ...

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return self

    def __set_name__(self, owner: type, name: str) -> None:
        # The annotation makes the name a field when py_class reads the class's annotations.
        self.name = name
        ann = Any if self._annotation is None else self._annotation
        if sys.version_info >= (3, 14):
            import annotationlib  # type: ignore[import-not-found]

            anns = dict(annotationlib.get_annotations(owner, format=annotationlib.Format.FORWARDREF))
            anns[name] = ann
            owner.__annotations__ = anns
        else:
            if "__annotations__" not in owner.__dict__:
                owner.__annotations__ = {}
            owner.__annotations__[name] = ann


def _init_property_funcs(cls: type) -> list[tuple[str, Callable[[Any], Any]]]:
    """(name, function) of each init_property of ``cls`` and its bases, parents' first;
    a subclass's replaces its parent's of the same name."""
    funcs: dict[str, Callable[[Any], Any]] = {}
    for klass in reversed(cls.__mro__):
        funcs.update(klass.__dict__.get("__ffi_init_property_funcs__", {}))
    return list(funcs.items())


def method(fn: Any) -> Any:
    """Marks a method of a ``@py_class`` body to be registered as a Function on the type,
    callable by name from C (``ffk_object_call_method``), Rust and Python reflection
    (``TypeInfo.methods``). Accepts plain functions and staticmethods; a classmethod is a
    TypeError (C passes an object, not a class, as argument 0). ``py_class`` also
    registers the public methods (names without a leading ``_``) of the body unmarked."""
    if isinstance(fn, classmethod):
        raise TypeError("ffikit.method: a classmethod cannot be a method of a type (C calls methods with the "
                        "object as argument 0); use a staticmethod or an instance method")
    if isinstance(fn, staticmethod):
        setattr(fn.__func__, "__ffi_method__", True)
        return fn
    if not callable(fn):
        raise TypeError(f"ffikit.method: expected a callable, got {type(fn).__name__}")
    setattr(fn, "__ffi_method__", True)
    return fn
