"""ffikit.dataclasses: object types defined in Python that C and Rust see, and Python
classes over types defined in C, with the standard ``dataclasses`` API (tvm_ffi's module
of the same name is the model: same names, signatures and behaviour).

``py_class`` turns a class body's annotations into a reflected type registered in C
(``ffk_type_define`` with automatic layout): the fields live in the C object, not in a
Python ``__dict__`` (the class has ``__slots__ = ()``), so C and Rust code read and write
them by name, and a py_class object passed to C comes back as itself (the same C object,
wrapped in the same class). Methods marked with :func:`method`, and the public methods
of the class body, become Functions on the type, callable from C with
``ffk_object_call_method``. ``c_class`` binds a class to a type defined in C and checks
its annotations against C's fields.

Invariants:

- Python only translates: an annotation becomes a type text of the signature language
  (``int``, ``Optional<str>``, ``Array<mylib.Node>``), a ``field()`` becomes flags and a
  default; C validates the description and converts every value, and its error texts
  are the ones users read. The generated ``__eq__``/``__lt__``/``__hash__`` compare the
  tuples of compared fields as the standard library's do.
- A class is defined in C once per description: defining the same class again (a module
  reloaded) reuses the type; a different description under the same key is C's
  ValueError. Default factories reach C as one Function per (type key, field), created
  once, that calls the class's current factory, so a reload does not change the
  description.
- Annotations that name a class not defined yet (a sibling declared later in the module)
  defer the definition: the key is registered at once (so other classes can name it),
  and the fields are defined when the missing name appears (the next py_class in the
  module) or at the class's first construction, which raises TypeError listing what is
  still unresolved.
"""
from __future__ import annotations

import collections.abc
import copy as _copy
import dataclasses as _std_dataclasses
import inspect
import sys
import types
import typing
from typing import TYPE_CHECKING, Any, Callable, TypeVar, overload

from . import _core
from ._core import Device, Function, Object, Tensor
from ._dtype import dtype
from ._object import Bytes, Shape, String, TypeInfo, _bind_class
from .container import Array, Dict, List, Map

_T = TypeVar("_T", bound=type)
_O = TypeVar("_O")

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
elif TYPE_CHECKING:  # type checkers for 3.10 read typeshed's typing_extensions (no runtime import)
    from typing_extensions import dataclass_transform
else:  # the metadata is kept as typing's keeps it
    def dataclass_transform(*, eq_default: bool = True, order_default: bool = False, kw_only_default: bool = False,
                            frozen_default: bool = False, field_specifiers: tuple[Any, ...] = (),
                            **kwargs: Any) -> Callable[[Any], Any]:
        def mark(f: Any) -> Any:
            f.__dataclass_transform__ = {"eq_default": eq_default, "order_default": order_default,
                                         "kw_only_default": kw_only_default, "frozen_default": frozen_default,
                                         "field_specifiers": field_specifiers, "kwargs": kwargs}
            return f

        return mark

KW_ONLY = _std_dataclasses.KW_ONLY

#: The C field flags (ffikit/reflect.h, FFK_FIELD_*).
_WRITABLE, _HAS_DEFAULT, _INIT_OFF, _KW_ONLY, _REPR_OFF, _COMPARE_OFF, _FACTORY = 1, 2, 4, 8, 16, 32, 64
_S_DEF, _S_DEF_SIMPLE = 128, 256

_OBJECT_INDEX = 64  # FFK_TYPE_OBJECT

#: Type attributes a class body may define, stored in C's type attribute table.
#: ``__s_visit__(visitor, obj)`` and ``__s_mutate__(mutator, obj)`` replace the structural
#: walks' and rewrites' descent into the type's objects (ffikit/structural_visit.h).
_TYPE_ATTR_NAMES = frozenset({"__s_equal__", "__s_hash__", "__s_visit__", "__s_mutate__", "__data_to_json__",
                              "__data_from_json__"})

#: py_class's structural_eq kinds, as the C values of the __s_kind__ type attribute
#: (ffikit/reflect.h, ffk_s_kind; tvm_ffi's numbers). None is identity, through hooks.
_STRUCTURAL_KINDS: dict[str | None, int] = {None: 0, "tree": 1, "var": 2, "dag": 3, "const-tree": 4, "singleton": 5}


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


# ---- Annotations -> type texts ----------------------------------------------------------


class _Unresolved(Exception):
    """An annotation names something not defined yet (the definition is deferred)."""


def _key_of(cls: type) -> str | None:
    """The type key of a class bound to a C type (py_class, c_class, register_object), or None."""
    info = cls.__dict__.get("__tvm_ffi_type_info__")
    if isinstance(info, TypeInfo):
        return info.type_key
    pending = cls.__dict__.get("__ffi_pending_key__")
    return pending if isinstance(pending, str) else None


_ANY_LIKE = (Any, object)
_SCALARS: dict[Any, str] = {int: "int", float: "float", bool: "bool", str: "str", bytes: "bytes", String: "str",
                            Bytes: "bytes", type(None): "None", None: "None", Tensor: "Tensor", Device: "Device",
                            dtype: "dtype", _core.DataType: "dtype", Shape: "Shape", Function: "Function",
                            Object: "Object"}
_SEQUENCE_ORIGINS: dict[Any, str] = {list: "List", List: "List", Array: "Array", collections.abc.MutableSequence: "List",
                                     collections.abc.Sequence: "Array"}
_MAPPING_ORIGINS: dict[Any, str] = {dict: "Dict", Dict: "Dict", Map: "Map", collections.abc.MutableMapping: "Dict",
                                    collections.abc.Mapping: "Map"}


def _type_text(ann: Any, ns: dict[str, Any], where: str) -> str:
    """The signature-language text of annotation ``ann``; names resolve in ``ns``.

    Raises _Unresolved for a name not defined yet, TypeError for an annotation that has
    no ffikit type (naming ``where``: the field and class).
    """
    while isinstance(ann, (str, typing.ForwardRef)):  # a string may hold a string: x: "'Node'"
        text = ann.__forward_arg__ if isinstance(ann, typing.ForwardRef) else ann
        try:
            ann = eval(text, ns)  # noqa: S307 - annotations are code the class's author wrote
        except NameError as e:
            raise _Unresolved(f"{where}: {e}") from None
    if any(ann is a for a in _ANY_LIKE):
        return "Any"
    try:
        scalar = _SCALARS.get(ann)
    except TypeError:  # an unhashable annotation object
        scalar = None
    if scalar is not None:
        return scalar
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin is typing.Union or (sys.version_info >= (3, 10) and origin is types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2:
            inner = _type_text(rest[0], ns, where)
            return inner if inner.startswith("Optional<") or inner == "Any" else f"Optional<{inner}>"
        raise TypeError(f"{where}: ffikit has no type for the union {ann!r} (only Optional[T] / T | None)")
    if origin is typing.ClassVar:
        raise TypeError(f"{where}: a ClassVar is not a field")
    if origin is collections.abc.Callable or ann is collections.abc.Callable or ann is typing.Callable:
        return "Function"
    if origin is not None and origin in _SEQUENCE_ORIGINS:
        name = _SEQUENCE_ORIGINS[origin]
        return f"{name}<{_type_text(args[0], ns, where)}>" if args else name
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"Array<{_type_text(args[0], ns, where)}>"
        return "Tuple"
    if origin is not None and origin in _MAPPING_ORIGINS:
        name = _MAPPING_ORIGINS[origin]
        if args:
            return f"{name}<{_type_text(args[0], ns, where)}, {_type_text(args[1], ns, where)}>"
        return name
    if isinstance(ann, type):
        if ann in _SEQUENCE_ORIGINS:
            return _SEQUENCE_ORIGINS[ann]
        if ann in _MAPPING_ORIGINS:
            return _MAPPING_ORIGINS[ann]
        if ann is tuple:
            return "Tuple"
        if issubclass(ann, Object):
            key = _key_of(ann)
            if key is not None:
                return key
            raise TypeError(f"{where}: {ann.__qualname__} is not bound to an ffikit type (decorate it with "
                            "py_class, c_class or register_object)")
    raise TypeError(f"{where}: ffikit has no type for the annotation {ann!r}")


# ---- py_class ---------------------------------------------------------------------------


# Classes by module and name, pending ones included: the names forward references resolve to.
_BY_MODULE: dict[str, dict[str, type]] = {}
# Deferred classes, in declaration order: (class, options).
_PENDING: list[tuple[type, dict[str, Any]]] = []
# (type key, field name) -> the Function C calls as the default factory, and the factory it calls now.
_FACTORY_FUNCTIONS: dict[tuple[str, str], Function] = {}
_FACTORIES: dict[tuple[str, str], Callable[[], Any]] = {}


def _factory_function(key: str, name: str, factory: Callable[[], Any]) -> Function:
    _FACTORIES[(key, name)] = factory
    f = _FACTORY_FUNCTIONS.get((key, name))
    if f is None:
        def make() -> Any:
            return _FACTORIES[(key, name)]()

        make.__qualname__ = f"{key}.{name}.default_factory"
        f = _core.convert(make)
        _FACTORY_FUNCTIONS[(key, name)] = f
    return f


def _identity_equal(a: Any, b: Any, equal: Any) -> bool:
    """``__s_equal__`` of structural_eq=None / "singleton" types: the same object."""
    return bool(a.same_as(b))


def _identity_hash(v: Any, hash_fn: Any) -> int:
    """``__s_hash__`` of structural_eq=None / "singleton" types: the object's address."""
    return hash(Object.__hash__(v)) & 0x7FFFFFFFFFFFFFFF


def _s_hash_hook(fn: Any) -> Any:
    """The ``__s_hash__`` C calls for a class body's hook. C calls hook(v, hash); a hook
    written for tvm_ffi takes (self, init_hash, hash_cb) and returns init_hash combined
    with its parts (``hash_cb(x, init_hash, def_region)``, which C's hash accepts), so it
    is called with init_hash 0 (C mixes the type key into what a hook returns)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # no signature to read: C's form
        return fn
    positional = [p for p in params if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                  inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    if len(positional) != 3 or any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return fn

    def hook(v: Any, hash_fn: Any) -> Any:
        return fn(v, 0, hash_fn)

    hook.__qualname__ = getattr(fn, "__qualname__", "__s_hash__")
    hook.__wrapped__ = fn  # type: ignore[attr-defined]
    return hook


def _parent_of(cls: type) -> tuple[int, type | None]:
    """The type index of the nearest base bound to a C type, and that base (None: Object).
    A base that is a py_class still waiting for its fields counts (its key is registered)."""
    for base in cls.__mro__[1:]:
        if base is Object:
            return _OBJECT_INDEX, None
        info = base.__dict__.get("__tvm_ffi_type_info__")
        if isinstance(info, TypeInfo):
            return info.type_index, base
        pending = base.__dict__.get("__ffi_pending_key__")
        if isinstance(pending, str):
            index = _core._type_key_to_index(pending)
            if index is not None:
                return index, base
    raise TypeError(f"{cls.__name__} must inherit from ffikit.Object or a class bound to an ffikit type")


def _fields_from_c(type_index: int, annotated: dict[str, Any], frozen_owner: str | None) -> list[Field]:
    """:class:`Field` objects for the fields C declares for a type (inherited ones first);
    those declared by the type ``frozen_owner`` are frozen (a frozen c_class)."""
    out = []
    for d in _core._type_fields(type_index):
        f = Field(init=not d.init_off, repr=not d.repr_off, compare=not d.compare_off, kw_only=d.kw_only,
                  frozen=d.frozen or d.owner == frozen_owner, doc=d.__doc__)
        if d.has_default:
            f.default = d.default  # a default factory's value is made per object: None here
        f.name = d.name
        f.type_text = d.type
        f.type = annotated.get(d.name)
        f.hash = f.compare
        out.append(f)
    return out


def _with_empty_slots(cls: type) -> type:
    """``cls`` itself when it stores nothing in Python (``__slots__ = ()``), else the same
    class made again with ``__slots__ = ()`` (as the standard library's slots=True does),
    with ``super()`` cells pointing at the new class."""
    if "__slots__" in cls.__dict__:
        if tuple(cls.__dict__["__slots__"]) != ():
            raise TypeError(f"{cls.__name__}: a py_class stores its fields in C; its __slots__ must be empty")
        return cls
    body = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__")}
    body["__slots__"] = ()
    new = type(cls)(cls.__name__, cls.__bases__, body)
    new.__qualname__ = cls.__qualname__
    for value in body.values():
        fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        if isinstance(value, property):
            fns = [value.fget, value.fset, value.fdel]
        else:
            fns = [fn]
        for f in fns:
            code = getattr(f, "__code__", None)
            closure = getattr(f, "__closure__", None)
            if code is None or closure is None or "__class__" not in code.co_freevars:
                continue
            cell = closure[code.co_freevars.index("__class__")]
            if cell.cell_contents is cls:
                cell.cell_contents = new
    return new


def _own_annotations(cls: type) -> dict[str, Any]:
    if sys.version_info >= (3, 14):  # PEP 649: evaluated lazily, forward references kept
        import annotationlib  # type: ignore[import-not-found]

        return dict(annotationlib.get_annotations(cls, format=annotationlib.Format.FORWARDREF))
    return dict(cls.__dict__.get("__annotations__", {}))


def _is_kw_only_marker(ann: Any, ns: dict[str, Any]) -> bool:
    if isinstance(ann, str):
        try:
            ann = eval(ann, ns)  # noqa: S307
        except Exception:  # noqa: BLE001 - not the marker, resolved (or reported) later
            return False
    return ann is KW_ONLY


def _is_class_var(ann: Any, ns: dict[str, Any]) -> bool:
    if isinstance(ann, str):
        text = ann.strip()
        if text.startswith(("ClassVar", "typing.ClassVar")):
            return True
        try:
            ann = eval(ann, ns)  # noqa: S307
        except Exception:  # noqa: BLE001
            return False
    return ann is typing.ClassVar or typing.get_origin(ann) is typing.ClassVar


def _namespace(cls: type) -> dict[str, Any]:
    module = sys.modules.get(cls.__module__)
    ns = dict(vars(module)) if module is not None else {}
    ns.update(_BY_MODULE.get(cls.__module__, {}))
    ns[cls.__name__] = cls
    return ns


def _mutable_default(value: Any) -> bool:
    return isinstance(value, (list, dict, set, List, Dict, bytearray))


def _resolve_fields(cls: type, key: str, opts: dict[str, Any]) -> list[Field]:
    """The class's own fields, in order, with their type texts (raises _Unresolved)."""
    ns = _namespace(cls)
    kw_only = bool(opts["kw_only"])
    own: list[Field] = []
    init_props: dict[str, Callable[[Any], Any]] = {}
    for name, ann in _own_annotations(cls).items():
        if _is_class_var(ann, ns):
            continue
        if _is_kw_only_marker(ann, ns):
            kw_only = True
            continue
        where = f"field `{name}` of `{key}`"
        text = _type_text(ann, ns, where)
        value = cls.__dict__.get(name, MISSING)
        if isinstance(value, Field):
            f = _copy.copy(value)
        elif isinstance(value, init_property):
            f = Field(init=False, repr=False, hash=False, compare=False, structural_eq="ignore")
            init_props[name] = value.func
        elif value is not MISSING:
            f = Field(default=value)
        else:
            f = Field()
        if f.default is not MISSING and _mutable_default(f.default):
            raise ValueError(f"mutable default {type(f.default)} for field {name} is not allowed: use default_factory")
        f.name = name
        f.type_text = text
        try:
            f.type = eval(ann, ns) if isinstance(ann, str) else ann  # noqa: S307
        except Exception:  # noqa: BLE001 - the text above resolved; keep the written form
            f.type = ann
        if f.kw_only is None:
            f.kw_only = kw_only
        if opts["frozen"]:
            f.frozen = True
        if f.hash is None:
            f.hash = f.compare
        if f.extra_kwargs:
            raise TypeError(f"{cls.__name__}.{name}: unrecognized field options: {', '.join(sorted(f.extra_kwargs))}")
        own.append(f)
    if init_props:
        setattr(cls, "__ffi_init_property_funcs__", init_props)
    return own


def _collect_methods(cls: type) -> list[tuple[str, Any, bool, str | None]]:
    """(name, function, is_static, doc) for each method the type gets: marked ones and the
    public plain/static methods of the class body."""
    out = []
    for name, value in cls.__dict__.items():
        if name in _TYPE_ATTR_NAMES:
            continue
        if isinstance(value, classmethod):
            if getattr(value.__func__, "__ffi_method__", False):
                raise TypeError(f"py_class {cls.__name__}: method {name!r} is a classmethod, which cannot be a "
                                "method of a type; use a staticmethod or an instance method")
            continue
        is_static = isinstance(value, staticmethod)
        fn = value.__func__ if is_static else value
        if not isinstance(fn, types.FunctionType):
            continue
        marked = getattr(fn, "__ffi_method__", False) is True
        if not marked and name.startswith("_"):
            continue
        out.append((name, fn, is_static, inspect.getdoc(fn)))
    return out


def _finish(cls: type, opts: dict[str, Any]) -> None:
    """Defines the C type of a class whose annotations resolve, and completes the class."""
    key: str = cls.__dict__["__ffi_pending_key__"]
    parent_index, parent_cls = _parent_of(cls)
    if parent_cls is not None and "__ffi_pending_key__" in parent_cls.__dict__:
        raise _Unresolved(f"the base class {parent_cls.__name__} is not defined yet")
    own = _resolve_fields(cls, key, opts)
    if parent_cls is None:
        inherited: list[Field] = []
    elif is_dataclass(parent_cls):
        inherited = list(fields(parent_cls))
    else:
        inherited = _fields_from_c(parent_index, {}, None)
    all_fields = inherited + own
    specs = []
    for f in own:
        default: Any = None
        if f.default_factory is not MISSING:
            default = _factory_function(key, f.name, f.default_factory)
        elif f.default is not MISSING:
            default = f.default
        specs.append((f.name, str(f.type_text), f._flags(), default, f.doc))
    doc = cls.__dict__.get("__doc__")
    index = _core._type_define(key, parent_index, specs, doc if isinstance(doc, str) else None)
    for f in own:  # the class attributes that held defaults make way for the C fields
        if f.name in cls.__dict__:
            delattr(cls, f.name)
    for name, fn, is_static, mdoc in _collect_methods(cls):
        _core._type_add_method(index, name, fn, is_static, mdoc)
    for name in _TYPE_ATTR_NAMES:
        if name in cls.__dict__:
            value = cls.__dict__[name]
            value = value.__func__ if isinstance(value, staticmethod) else value
            if name == "__s_hash__":
                value = _s_hash_hook(value)
            _core._type_set_attr(index, name, value)
    kind = opts["structural_eq"]
    if kind is None and "__s_equal__" not in cls.__dict__:
        _core._type_set_attr(index, "__s_equal__", _identity_equal)
        _core._type_set_attr(index, "__s_hash__", _identity_hash)
    elif kind is not None:  # each type its own kind, as tvm_ffi registers it (not the parent's)
        _core._type_set_attr(index, "__s_kind__", _STRUCTURAL_KINDS[kind])
    delattr(cls, "__ffi_pending_key__")
    _core._reflect_class(cls, index, True)  # tracked: one wrapper per object, all POD fields cached
    _bind_class(cls, index)
    _core._register_class(index, cls)
    setattr(cls, "__ffi_dataclass_fields__", tuple(all_fields))
    _install_dunders(cls, all_fields, opts, py_class_mode=True)
    setattr(cls, "__ffi_is_dataclass__", True)


def _flush_pending() -> None:
    """Finishes the deferred classes whose annotations resolve now."""
    progress = True
    while progress:
        progress = False
        for entry in list(_PENDING):
            cls, opts = entry
            try:
                _remove_deferred_new(cls)
                _finish(cls, opts)
            except _Unresolved:
                _install_deferred_new(cls, opts)
                continue
            except Exception:  # noqa: BLE001 - reported when the class is constructed, not here
                _PENDING.remove(entry)
                _install_deferred_new(cls, opts)
                continue
            _PENDING.remove(entry)
            progress = True


def _install_deferred_new(cls: type, opts: dict[str, Any]) -> None:
    """Until its fields are defined, constructing the class finishes it first (or raises
    TypeError naming the annotations that still do not resolve)."""
    def __new__(klass: type, *args: Any, **kwargs: Any) -> Any:
        if "__ffi_pending_key__" in cls.__dict__:
            _remove_deferred_new(cls)
            try:
                _finish(cls, opts)
            except _Unresolved as e:
                _install_deferred_new(cls, opts)
                raise TypeError(f"cannot construct {cls.__name__}: unresolved forward reference ({e})") from None
            except BaseException:
                _install_deferred_new(cls, opts)
                raise
            _PENDING[:] = [p for p in _PENDING if p[0] is not cls]
        return klass.__new__(klass, *args, **kwargs)  # Object's: the caller's type() runs __init__

    setattr(cls, "__new__", staticmethod(__new__))
    setattr(cls, "__ffi_deferred_new__", True)


def _remove_deferred_new(cls: type) -> None:
    if cls.__dict__.get("__ffi_deferred_new__"):
        delattr(cls, "__new__")
        delattr(cls, "__ffi_deferred_new__")


@overload
@dataclass_transform(eq_default=False, order_default=False, field_specifiers=(Field, field))
def py_class(cls_or_type_key: _T, /, *, type_key: str | None = None, frozen: bool = False, init: bool = True,
             repr: bool = True, eq: bool = False, order: bool = False, unsafe_hash: bool = False,
             match_args: bool = True, kw_only: bool = False, structural_eq: str | None = "tree",
             slots: bool = True) -> _T: ...
@overload
@dataclass_transform(eq_default=False, order_default=False, field_specifiers=(Field, field))
def py_class(cls_or_type_key: str | None = None, /, *, type_key: str | None = None, frozen: bool = False,
             init: bool = True, repr: bool = True, eq: bool = False, order: bool = False, unsafe_hash: bool = False,
             match_args: bool = True, kw_only: bool = False, structural_eq: str | None = "tree",
             slots: bool = True) -> Callable[[_T], _T]: ...


@dataclass_transform(eq_default=False, order_default=False, field_specifiers=(Field, field))
def py_class(cls_or_type_key: Any = None, /, *, type_key: str | None = None, frozen: bool = False, init: bool = True,
             repr: bool = True, eq: bool = False, order: bool = False, unsafe_hash: bool = False,
             match_args: bool = True, kw_only: bool = False, structural_eq: str | None = "tree",
             slots: bool = True) -> Any:
    """Defines a new reflected type from a class's annotations (tvm_ffi's ``py_class``)::

        @py_class("mylib.Node")
        class Node(ffikit.Object):
            value: int
            next: Optional["Node"] = None
            tags: list[str] = field(default_factory=list)

    Usable bare (``@py_class``: the key is ``<module>.<qualname>``), with a key, with
    options, or both. Annotations map to C types: ``int float bool str bytes``,
    ``Optional[T]`` / ``T | None``, ``list[T]`` / ``ffikit.List[T]`` -> ``List<T>``,
    ``dict[K, V]`` / ``ffikit.Dict`` -> ``Dict<K, V>``, ``ffikit.Array[T]`` and
    ``tuple[T, ...]`` -> ``Array<T>``, ``ffikit.Map[K, V]``, other py_class / c_class /
    registered classes (the class itself too) by their key, ``Any`` / ``object``,
    ``Tensor``, ``Callable`` / ``Function``, ``Device``, ``dtype``. ``ClassVar``
    annotations are not fields; ``_: KW_ONLY`` makes the fields after it keyword-only.

    The constructor takes the required fields first, then those with a default, each in
    field order (parents' first), then the keyword-only ones: tvm_ffi's order, decided by
    C for every reflected type, so ``a: int = 1`` before ``b: int`` gives ``__init__(b, a=1)``
    where the standard library raises; ``__match_args__`` keeps field order.

    Options as the standard ``dataclasses.dataclass`` (and tvm_ffi): ``frozen`` (fields
    read-only in C after construction: assignment raises AttributeError), ``init``
    (False: the class cannot be constructed without an ``__init__`` of its own),
    ``repr`` (False: Python's default repr), ``eq`` / ``order`` (field-wise ``==`` and
    ordering; default off: ``==`` is identity, ``same_as``), ``unsafe_hash``,
    ``match_args``, ``kw_only``; ``__post_init__`` runs after construction.
    ``structural_eq`` (the C type's ``__s_kind__``, ffikit/structural.h): ``"tree"``
    (field-wise structural equality and hash, the default), ``"const-tree"`` (the same,
    and an object equals itself without a look inside), ``"var"`` (a variable: equal
    to another only where bound to it, by a ``field(structural_eq="def")`` or
    ``map_free_vars``), ``"dag"`` (field-wise, and the sharing must match),
    ``"singleton"`` / ``None`` (by identity). ``slots`` is accepted
    for compatibility: fields always live in C and the class has ``__slots__ = ()``.

    The decorator may return a new class (the same body, made again with
    ``__slots__ = ()``) when the class body did not declare empty slots. Raises
    TypeError for an annotation without an ffikit type or a class not derived from
    ffikit.Object, ValueError for bad options and C's ValueError for a description C
    refuses (a key defined before with other fields).
    """
    if order and not eq:
        raise ValueError("order=True requires eq=True")
    if structural_eq not in _STRUCTURAL_KINDS:
        raise ValueError(f"structural_eq must be one of {sorted(k for k in _STRUCTURAL_KINDS if k is not None)} "
                         f"or None, got {structural_eq!r}")
    opts = {"frozen": frozen, "init": init, "repr": repr, "eq": eq, "order": order, "unsafe_hash": unsafe_hash,
            "match_args": match_args, "kw_only": kw_only, "structural_eq": structural_eq}
    explicit_key = type_key

    def decorate(cls: _T) -> _T:
        if not (isinstance(cls, type) and issubclass(cls, Object)):
            raise TypeError(f"py_class: {cls!r} must be a class derived from ffikit.Object")
        parent_index, _ = _parent_of(cls)
        new = _with_empty_slots(cls)
        key = explicit_key if explicit_key is not None else f"{new.__module__}.{new.__qualname__}"
        _core._type_register(key, parent_index)  # other classes may name it from now on
        setattr(new, "__ffi_pending_key__", key)
        _BY_MODULE.setdefault(new.__module__, {})[new.__name__] = new
        try:
            _finish(new, opts)
        except _Unresolved:
            _PENDING.append((new, opts))
            _install_deferred_new(new, opts)
            return typing.cast(_T, new)
        except BaseException:
            _BY_MODULE.get(new.__module__, {}).pop(new.__name__, None)
            raise
        _flush_pending()
        return typing.cast(_T, new)

    if cls_or_type_key is None:
        return decorate
    if isinstance(cls_or_type_key, str):
        explicit_key = cls_or_type_key
        return decorate
    if isinstance(cls_or_type_key, type):
        return decorate(cls_or_type_key)
    raise TypeError(f"py_class: expected a str or a class, got {type(cls_or_type_key).__name__}")


# ---- c_class ----------------------------------------------------------------------------


def _compatible(ann_text: str, c_text: str) -> bool:
    """Whether an annotation's type text agrees with a C field's type text."""
    a, c = ann_text.replace(" ", ""), c_text.replace(" ", "")
    if a == "Any" or a == c:
        return True
    if a.startswith("Optional<") and not c.startswith("Optional<"):
        return False
    # An abstract collection annotation (Sequence / Mapping) accepts any container of its kind.
    if a.startswith("Array") and c.startswith(("Array", "List", "Tuple")) and (a == "Array" or a[5:] == c[c.find("<"):]):
        return True
    if a.startswith("Map") and c.startswith(("Map", "Dict")) and (a == "Map" or a[3:] == c[c.find("<"):]):
        return True
    if a == "Object" and c not in ("int", "float", "bool", "str", "bytes", "Device", "dtype", "Any", "None"):
        return True
    return False


@dataclass_transform(eq_default=False, order_default=False, field_specifiers=(Field, field))
def c_class(type_key: str, *, frozen: bool = False, init: bool = True, repr: bool = True, eq: bool = False,
            order: bool = False, unsafe_hash: bool = False, match_args: bool = True) -> Callable[[_T], _T]:
    """Binds a class to the reflected type ``type_key`` defined in C (tvm_ffi's ``c_class``)::

        @c_class("testing.TestIntPair")
        class Pair(ffikit.Object):
            a: int
            b: int

    The class gets C's fields, methods and constructor (as ``register_object`` gives
    them) and the dataclass API (:func:`fields`, :func:`asdict`, :func:`replace` ...).
    Each annotated field is checked against C: a name C's type does not have, or a type
    that disagrees with C's, is a TypeError naming the field. ``frozen`` makes the
    fields read-only through Python assignment (FrozenInstanceError); the other options
    are py_class's. Raises ValueError "Cannot find object type index for <key>" for an
    unknown key.
    """
    if order and not eq:
        raise ValueError("order=True requires eq=True")
    opts = {"frozen": frozen, "init": init, "repr": repr, "eq": eq, "order": order, "unsafe_hash": unsafe_hash,
            "match_args": match_args, "kw_only": False, "structural_eq": "tree"}

    def decorate(cls: _T) -> _T:
        if not (isinstance(cls, type) and issubclass(cls, Object)):
            raise TypeError(f"c_class: {cls!r} must be a class derived from ffikit.Object")
        index = _core._type_key_to_index(type_key)
        if index is None:
            raise ValueError(f"Cannot find object type index for {type_key}")
        c_fields = {d.name: d for d in _core._type_fields(index)}
        ns = _namespace(cls)
        ns[cls.__name__] = cls
        setattr(cls, "__ffi_pending_key__", type_key)  # the class names itself
        annotated: dict[str, Any] = {}
        try:
            for name, ann in _own_annotations(cls).items():
                if _is_class_var(ann, ns) or _is_kw_only_marker(ann, ns):
                    continue
                if name not in c_fields:
                    raise TypeError(f"c_class `{type_key}`: annotated field `{name}` is not a field of the C type "
                                    f"(its fields: {', '.join(c_fields) or 'none'})")
                try:
                    text = _type_text(ann, ns, f"field `{name}` of `{type_key}`")
                except _Unresolved as e:
                    raise TypeError(f"c_class `{type_key}`: {e}") from None
                if not _compatible(text, c_fields[name].type):
                    raise TypeError(f"c_class `{type_key}`: field `{name}` is annotated `{text}` but C declares "
                                    f"`{c_fields[name].type}`")
                annotated[name] = ann
                if isinstance(cls.__dict__.get(name), Field):
                    delattr(cls, name)
        finally:
            delattr(cls, "__ffi_pending_key__")
        _bind_class(cls, index)
        _core._register_class(index, cls)
        all_fields = _fields_from_c(index, annotated, type_key if frozen else None)
        if frozen:
            for d in _core._type_fields(index):
                if d.owner == type_key and not d.frozen:
                    setattr(cls, d.name, _FrozenField(d))
        setattr(cls, "__ffi_dataclass_fields__", tuple(all_fields))
        _install_dunders(cls, all_fields, opts, py_class_mode=False)
        setattr(cls, "__ffi_is_dataclass__", True)
        return cls

    return decorate


class _FrozenField:
    """A C field that a frozen c_class reads but does not assign (``Class.x.set(obj, v)``
    still writes it)."""

    def __init__(self, descr: Any) -> None:
        self.field = descr
        self.__doc__ = descr.__doc__
        self.name = descr.name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return self if obj is None else self.field.get(obj)

    def __set__(self, obj: Any, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {self.name!r}")

    def __delete__(self, obj: Any) -> None:
        raise FrozenInstanceError(f"cannot delete field {self.name!r}")

    def get(self, obj: Any) -> Any:
        return self.field.get(obj)

    def set(self, obj: Any, value: Any) -> None:
        self.field.set(obj, value)


# ---- dunders ----------------------------------------------------------------------------


def _comparable(value: Any) -> Any:
    """A field value as the standard library would compare it: ffikit sequences as
    tuples, mappings as dicts (containers compare by identity in ffikit)."""
    if isinstance(value, (Array, List)):
        return tuple(_comparable(v) for v in value)
    if isinstance(value, (Map, Dict)):
        return {_comparable(k): _comparable(v) for k, v in value.items()}
    return value


def _hashable(value: Any) -> Any:
    if isinstance(value, (Array, List)):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, (Map, Dict)):
        return frozenset((_hashable(k), _hashable(v)) for k, v in value.items())
    return value


def _set_init_properties(obj: Any, init_props: list[tuple[str, Callable[[Any], Any]]]) -> None:
    """Computes and stores each init_property of a just-built object in turn (a later
    one may read an earlier one). A writable field is set as any other; a frozen class's
    read-only one is written as unpickling writes fields (C's ffk_object_init_fields),
    which is safe only while this wrapper alone holds the object (RuntimeError else)."""
    descrs = {d.name: d for d in _core._type_fields(type(obj).__tvm_ffi_type_info__.type_index)}
    names = list(descrs)
    for name, compute in init_props:
        value = compute(obj)
        if not descrs[name].frozen:
            descrs[name].set(obj, value)
            continue
        if obj._use_count() != 1:
            raise RuntimeError(f"init_property `{name}` of {type(obj).__name__}: the object is held elsewhere "
                               "already, so its read-only field cannot be written")
        values = list(_core._object_field_values(obj))
        values[names.index(name)] = value
        _core._object_init_fields(obj, values)


def _reinit(self: Any, *args: Any, **kwargs: Any) -> None:
    """``__ffi_init__`` of a py_class: constructs the object by its type's constructor
    (C checks and converts the arguments, fills defaults and factories). A py_class
    whose own ``__init__`` runs has an object built at its defaults already (so the
    ``__init__`` may assign fields first); then the call builds a new object from the
    arguments and writes its fields into this one, as tvm_ffi's ``__ffi_init__``
    (re)initializes the object it is called on. Only while this wrapper alone holds the
    object: its read-only fields are read without a lock, so an object that C, Rust or a
    container holds already is a RuntimeError."""
    if self.__chandle__() == 0:
        Object.__ffi_init__(self, *args, **kwargs)
        return
    if self._use_count() != 1:
        raise RuntimeError(f"__ffi_init__: this {type(self).__name__} object is held elsewhere already "
                           f"({self._use_count()} references); it can be initialized again only while its "
                           "__init__ alone holds it")
    fresh = _core._object_create(type(self).__tvm_ffi_type_info__.type_key, *args, **kwargs)
    _core._object_init_fields(self, _core._object_field_values(fresh))


def _install_dunders(cls: type, all_fields: list[Field], opts: dict[str, Any], *, py_class_mode: bool) -> None:
    own = cls.__dict__
    names = tuple(f.name for f in all_fields)
    compared = tuple(f.name for f in all_fields if f.compare)
    hashed = tuple(f.name for f in all_fields if f.hash)
    key = cls.__tvm_ffi_type_info__.type_key  # type: ignore[attr-defined]

    # __init__: C's constructor serves the generated one (Object's __new__, no Python
    # frame); a class with __post_init__ or its own __init__ gets a Python wrapper.
    if py_class_mode and "__ffi_init__" not in own:
        setattr(cls, "__ffi_init__", _reinit)
    if "__init__" in own:
        if py_class_mode:
            user_init = own["__init__"]
            if not getattr(user_init, "__ffi_wrapped_init__", False):
                def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
                    if self.__chandle__() == 0:
                        self.__init_handle_by_constructor__(_core._object_from_fields, key, {})
                    user_init(self, *args, **kwargs)

                setattr(__init__, "__ffi_wrapped_init__", True)
                setattr(__init__, "__wrapped__", user_init)
                __init__.__qualname__ = f"{cls.__qualname__}.__init__"
                __init__.__doc__ = user_init.__doc__
                setattr(cls, "__init__", __init__)
    elif not opts["init"]:
        message = f"`{cls.__name__}` cannot be constructed directly. Define a custom __init__ or use a factory method."

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            raise TypeError(message)

        __init__.__qualname__ = f"{cls.__qualname__}.__init__"
        setattr(cls, "__init__", __init__)
    elif hasattr(cls, "__post_init__") or _init_property_funcs(cls):
        init_props = _init_property_funcs(cls)
        post_init = hasattr(cls, "__post_init__")

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            if self.__chandle__() == 0:
                self.__ffi_init__(*args, **kwargs)
            if init_props:
                _set_init_properties(self, init_props)
            if post_init:
                self.__post_init__()

        setattr(__init__, "__ffi_post_init_wrapper__", True)
        __init__.__qualname__ = f"{cls.__qualname__}.__init__"
        setattr(cls, "__init__", __init__)  # the class's fast vectorcall then steps aside

    generated_init = opts["init"] and ("__init__" not in own or
                                       getattr(own["__init__"], "__ffi_post_init_wrapper__", False))
    setattr(cls, "__ffi_generated_init__", generated_init)
    if generated_init and py_class_mode and "__signature__" not in own:
        setattr(cls, "__signature__", _init_signature(all_fields))

    if opts["repr"]:
        if "__repr__" not in own:
            setattr(cls, "__repr__", Object.__repr__)
    elif "__repr__" not in own:
        setattr(cls, "__repr__", object.__repr__)

    if opts["eq"] and "__eq__" not in own:
        def __eq__(self: Any, other: Any) -> Any:
            if other.__class__ is not self.__class__:
                return NotImplemented
            return (tuple(_comparable(getattr(self, n)) for n in compared)
                    == tuple(_comparable(getattr(other, n)) for n in compared))

        __eq__.__qualname__ = f"{cls.__qualname__}.__eq__"
        setattr(cls, "__eq__", __eq__)
        if "__ne__" not in own:
            setattr(cls, "__ne__", object.__ne__)  # the inverse of __eq__

    if opts["order"]:
        for op_name, op in (("__lt__", "<"), ("__le__", "<="), ("__gt__", ">"), ("__ge__", ">=")):
            if op_name in own:
                raise TypeError(f"Cannot overwrite attribute {op_name} in class {cls.__name__}. Consider using "
                                "functools.total_ordering")
            cls_op = _make_order(op_name, op, compared)
            cls_op.__qualname__ = f"{cls.__qualname__}.{op_name}"
            setattr(cls, op_name, cls_op)

    # __hash__, by the standard library's table.
    has_own_hash = "__hash__" in own and own["__hash__"] is not None
    if opts["unsafe_hash"]:
        if has_own_hash:
            raise TypeError(f"Cannot overwrite attribute __hash__ in class {cls.__name__}")
        setattr(cls, "__hash__", _make_hash(hashed))
    elif opts["eq"] and not has_own_hash:
        if opts["frozen"]:
            setattr(cls, "__hash__", _make_hash(hashed))
        else:
            setattr(cls, "__hash__", None)

    if opts["match_args"] and "__match_args__" not in own:
        setattr(cls, "__match_args__", tuple(f.name for f in all_fields if f.init and not f.kw_only))

    if "__replace__" not in own:
        def __replace__(self: Any, /, **changes: Any) -> Any:
            return _replace(self, changes)

        setattr(cls, "__replace__", __replace__)
    del names


class _FactoryDefault:
    """The default shown in a signature for a field made by a default factory."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY_DEFAULT = _FactoryDefault()


def _init_signature(all_fields: list[Field]) -> inspect.Signature:
    """The constructor's signature, as C's constructor binds (ffikit/reflect.h): the
    required positional-or-keyword fields, then those with a default, each in field order,
    then the keyword-only ones."""
    required: list[inspect.Parameter] = []
    optional: list[inspect.Parameter] = []
    keyword: list[inspect.Parameter] = []
    for f in all_fields:
        if not f.init:
            continue
        default = (f.default if f.default is not MISSING else
                   _FACTORY_DEFAULT if f.default_factory is not MISSING else inspect.Parameter.empty)
        kind = inspect.Parameter.KEYWORD_ONLY if f.kw_only else inspect.Parameter.POSITIONAL_OR_KEYWORD
        param = inspect.Parameter(f.name, kind, default=default,
                                  annotation=f.type if f.type is not None else inspect.Parameter.empty)
        (keyword if f.kw_only else required if default is inspect.Parameter.empty else optional).append(param)
    return inspect.Signature(required + optional + keyword, return_annotation=None)


def _make_order(op_name: str, op: str, compared: tuple[str, ...]) -> Callable[[Any, Any], Any]:
    import operator

    fn = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}[op]

    def compare(self: Any, other: Any) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return fn(tuple(_comparable(getattr(self, n)) for n in compared),
                  tuple(_comparable(getattr(other, n)) for n in compared))

    compare.__name__ = op_name
    return compare


def _make_hash(hashed: tuple[str, ...]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(tuple(_hashable(getattr(self, n)) for n in hashed))

    return __hash__


# ---- the module functions ---------------------------------------------------------------


def is_dataclass(obj: Any) -> bool:
    """Whether ``obj`` is a py_class / c_class class or an instance of one."""
    cls = obj if isinstance(obj, type) else type(obj)
    return getattr(cls, "__ffi_is_dataclass__", False) is True


def fields(class_or_instance: Any) -> tuple[Field, ...]:
    """The :class:`Field` of every field of a py_class / c_class class or instance, inherited
    ones first (the constructor's order). TypeError for anything else."""
    if not is_dataclass(class_or_instance):
        raise TypeError("must be called with a dataclass type or instance")
    cls = class_or_instance if isinstance(class_or_instance, type) else type(class_or_instance)
    for klass in cls.__mro__:
        found = klass.__dict__.get("__ffi_dataclass_fields__")
        if found is not None:
            return tuple(found)
    return ()


def _is_instance(obj: Any) -> bool:
    return not isinstance(obj, type) and is_dataclass(obj)


def _asdict_inner(obj: Any, dict_factory: Callable[[Any], Any]) -> Any:
    if _is_instance(obj):
        return dict_factory([(f.name, _asdict_inner(getattr(obj, f.name), dict_factory)) for f in fields(obj)])
    if isinstance(obj, (Array, List)):
        return [_asdict_inner(v, dict_factory) for v in obj]
    if isinstance(obj, (Map, Dict)):
        return {_asdict_inner(k, dict_factory): _asdict_inner(v, dict_factory) for k, v in obj.items()}
    if isinstance(obj, (String, Bytes)):
        return str(obj) if isinstance(obj, str) else bytes(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*[_asdict_inner(v, dict_factory) for v in obj])
    if isinstance(obj, (list, tuple)):
        return type(obj)(_asdict_inner(v, dict_factory) for v in obj)
    if isinstance(obj, dict):
        return type(obj)((_asdict_inner(k, dict_factory), _asdict_inner(v, dict_factory)) for k, v in obj.items())
    if isinstance(obj, Object):  # a C object without fields of its own (a Function, a Tensor): itself
        return obj
    return _copy.deepcopy(obj)


def asdict(obj: Any, *, dict_factory: Callable[[Any], Any] = dict) -> Any:
    """The fields of a py_class / c_class instance as a dict, recursing into nested
    instances, ffikit containers (as lists and dicts) and Python lists, tuples and dicts,
    as ``dataclasses.asdict``. TypeError for anything but an instance."""
    if not _is_instance(obj):
        raise TypeError("asdict() should be called on dataclass instances")
    return _asdict_inner(obj, dict_factory)


def _astuple_inner(obj: Any, tuple_factory: Callable[[Any], Any]) -> Any:
    if _is_instance(obj):
        return tuple_factory([_astuple_inner(getattr(obj, f.name), tuple_factory) for f in fields(obj)])
    if isinstance(obj, (Array, List)):
        return [_astuple_inner(v, tuple_factory) for v in obj]
    if isinstance(obj, (Map, Dict)):
        return {_astuple_inner(k, tuple_factory): _astuple_inner(v, tuple_factory) for k, v in obj.items()}
    if isinstance(obj, (String, Bytes)):
        return str(obj) if isinstance(obj, str) else bytes(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*[_astuple_inner(v, tuple_factory) for v in obj])
    if isinstance(obj, (list, tuple)):
        return type(obj)(_astuple_inner(v, tuple_factory) for v in obj)
    if isinstance(obj, dict):
        return type(obj)((_astuple_inner(k, tuple_factory), _astuple_inner(v, tuple_factory))
                         for k, v in obj.items())
    if isinstance(obj, Object):
        return obj
    return _copy.deepcopy(obj)


def astuple(obj: Any, *, tuple_factory: Callable[[Any], Any] = tuple) -> Any:
    """The field values of a py_class / c_class instance as a tuple, recursing as
    :func:`asdict` does (``dataclasses.astuple``). TypeError for anything but an instance."""
    if not _is_instance(obj):
        raise TypeError("astuple() should be called on dataclass instances")
    return _astuple_inner(obj, tuple_factory)


def _replace(obj: Any, changes: dict[str, Any]) -> Any:
    all_fields = fields(obj)
    for f in all_fields:
        if not f.init and f.name in changes:
            raise ValueError(f"field {f.name} is declared with init=False, it cannot be specified with replace()")
    cls = type(obj)
    if cls.__dict__.get("__ffi_generated_init__", False):
        kwargs = {f.name: getattr(obj, f.name) for f in all_fields if f.init and f.name not in changes}
        kwargs.update(changes)
        return cls(**kwargs)
    # A class constructed by its own __init__: copy the fields into a new object, then set the changes.
    names = {f.name for f in all_fields}
    for name in changes:
        if name not in names:
            raise TypeError(f"{cls.__name__}.__replace__() got an unexpected keyword argument {name!r}")
    values = {f.name: getattr(obj, f.name) for f in all_fields}
    values.update(changes)
    return _core._object_from_fields(cls.__tvm_ffi_type_info__.type_key, values)


def replace(obj: _O, /, **changes: Any) -> _O:
    """A new object like ``obj`` (a py_class / c_class instance) with the fields named in
    ``changes`` replaced, as ``dataclasses.replace``: built by the class's constructor
    from the init fields, so frozen fields may be replaced; ValueError for an init=False
    field, TypeError for an unknown name or a value of the wrong type (C's message)."""
    if not _is_instance(obj):
        raise TypeError("replace() should be called on dataclass instances")
    new: _O = _replace(obj, changes)
    return new


# The converter convention goes into the decorators' dataclass_transform metadata after
# the fact, as tvm_ffi puts it there: type checkers refuse a keyword they do not know in
# the dataclass_transform call itself.
for _decorator in (py_class, c_class):
    getattr(_decorator, "__dataclass_transform__")["kwargs"]["converter"] = _field_converter
del _decorator

__all__ = ["KW_ONLY", "MISSING", "Field", "FrozenInstanceError", "Object", "asdict", "astuple", "c_class", "field",
           "fields", "init_property", "is_dataclass", "method", "py_class", "replace"]

# Enums (ffikit/_enum.py, over C's ffikit/enum.h), under tvm_ffi's names.
from ._enum import Enum, EnumAttrMap, EnumState, IntEnum, StrEnum, auto, entry  # noqa: E402
__all__ += ["Enum", "EnumAttrMap", "EnumState", "IntEnum", "StrEnum", "auto", "entry"]
