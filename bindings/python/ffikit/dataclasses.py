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
# Split by topic; every public name stays importable from here.
from ._dc_dunders import _install_dunders, asdict, astuple, fields, is_dataclass, replace
from ._dc_fields import KW_ONLY, MISSING, Field, FrozenInstanceError, _field_converter, field, init_property, method

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


_OBJECT_INDEX = _core.TYPE_OBJECT

#: Type attributes a class body may define, stored in C's type attribute table.
#: ``__s_visit__(visitor, obj)`` and ``__s_mutate__(mutator, obj)`` replace the structural
#: walks' and rewrites' descent into the type's objects (ffikit/structural_visit.h).
_TYPE_ATTR_NAMES = frozenset({"__s_equal__", "__s_hash__", "__s_visit__", "__s_mutate__", "__data_to_json__",
                              "__data_from_json__"})

#: py_class's structural_eq kinds, as the C values of the __s_kind__ type attribute
#: (ffikit/reflect.h, ffk_s_kind; tvm_ffi's numbers). None is identity, through hooks.
_STRUCTURAL_KINDS: dict[str | None, int] = {None: 0, "tree": _core.S_KIND_TREE, "var": _core.S_KIND_VAR,
                                             "dag": _core.S_KIND_DAG, "const-tree": _core.S_KIND_CONST_TREE,
                                             "singleton": _core.S_KIND_SINGLETON}


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
    that does not accept what C's field holds, is a TypeError naming the field. ``Any``
    accepts every field, ``Sequence[T]`` a C Array, List or Tuple of T, ``Mapping[K, V]``
    a Map or Dict, ``Object`` any object, a class its C type and subtypes, and
    ``Optional[T]`` only an Optional field (C decides: ``ffk_schema_accepts``). ``frozen`` makes the
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
                if not _core._schema_accepts(text, c_fields[name].type):  # C decides (ffk_schema_accepts)
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
