"""Cross-language enum singletons (tvm_ffi's ``tvm_ffi.dataclasses.Enum`` family).

A thin face over ffikit/enum.h: an enum class is a registered type derived from
``ffi.Enum`` (``ffi.IntEnum``, ``ffi.StrEnum``) whose members are singletons kept in the
type's C registry (an ``ffi.EnumState``), so C, Rust and Python look up the same objects::

    class Color(Enum, type_key="mylib.Color"):
        RED = auto()
        GREEN = entry()

    Color.get("RED") is Color.RED       # by str index; Color.get(0) by int index
    Color("GREEN") is Color.GREEN       # ValueError for an unknown index
    list(Color) == [Color.RED, Color.GREEN]

Members are made when the class body runs (``entry(...)`` / ``auto()`` / a bare
``NAME: ClassVar[Color]`` annotation / a payload literal in an IntEnum or StrEnum), given
their indices by tvm_ffi's rules, and registered in C; a class bound to an enum type C
already defined (``testing.TestEnumVariant``) finds C's members by name and adds the
missing ones through ``ffk_enum_add``.
"""
from __future__ import annotations

import typing
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from . import _core
from ._core import Object
from .container import Dict, List
from .dataclasses import MISSING, c_class, py_class

if TYPE_CHECKING:  # dataclasses imports this module: its decorator's type is not known yet here
    _T = typing.TypeVar("_T", bound=type)

    def _c_class(type_key: str, **kwargs: Any) -> Callable[[_T], _T]: ...
else:
    _c_class = c_class

__all__ = ["ENUM_STATE_ATTR", "Enum", "EnumAttrMap", "EnumState", "IntEnum", "StrEnum", "auto", "entry"]

ENUM_STATE_ATTR = "__ffi_enum__"
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_ABSENT: Any = object()


@_c_class("ffi.EnumState")
class EnumState(Object):
    """Registry state shared by enum definition and lookup (C's ``ffi.EnumState``)."""

    __slots__ = ()
    if TYPE_CHECKING:  # C's fields: List<Object>, Dict<Any, Object>, Dict<str, Dict<Object, Any>>
        entries: List
        indexes: Dict
        attrs: Dict

        def __init__(self) -> None: ...


class _EnumEntry:
    __slots__ = ("args", "kwargs")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs

    def __repr__(self) -> str:
        values = [repr(arg) for arg in self.args]
        values.extend(f"{key}={value!r}" for key, value in self.kwargs.items())
        return f"entry({', '.join(values)})"


def entry(*args: Any, **kwargs: Any) -> Any:
    """Declare an enum variant, optionally with declared-field values."""
    return _EnumEntry(*args, **kwargs)


def auto() -> Any:
    """Declare a variant whose indices are inferred from its class-body alias."""
    return _EnumEntry()


class _ClassProperty:
    __slots__ = ("fget",)

    def __init__(self, fget: Callable[[type], Any]) -> None:
        self.fget = fget

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        return self.fget(owner if owner is not None else type(instance))


def _index_of(cls: type) -> int | None:
    """The enum type index of a class bound to one, else None."""
    index = getattr(cls, "__ffi_type_index__", None)
    if not isinstance(index, int) or _core._enum_kind(index) < 0:
        return None
    return index


def _state(cls: type, *, create: bool = False) -> EnumState | None:
    index = _index_of(cls)
    return None if index is None else typing.cast("EnumState | None", _core._enum_state(index, create))


def _ordered_entries(cls: type) -> list[Any]:
    index = _index_of(cls)
    return [] if index is None else _core._enum_members(index)


class _EnumMeta(type(Object)):  # type: ignore[misc]
    def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any], **kwargs: Any) -> Any:
        # Fields live in C (py_class needs empty slots, and then keeps this very class).
        ns.setdefault("__slots__", ())
        return super().__new__(mcls, name, bases, ns, **kwargs)

    def __iter__(cls) -> Iterator[Any]:
        return iter(_ordered_entries(cls))

    def __len__(cls) -> int:
        index = _index_of(cls)
        return 0 if index is None else int(_core._enum_count(index))

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and len(args) == 1:
            value = args[0]
            if isinstance(value, cls):
                return value
            if isinstance(value, (int, str)):
                member = _core._enum_lookup(cls, value)
                if member is None:
                    raise ValueError(f"{value!r} is not a valid {cls.__name__}")
                return member
        return super().__call__(*args, **kwargs)


@_c_class("ffi.Enum")
class Enum(Object, metaclass=_EnumMeta):
    """Base class for FFI-registered enum singletons."""

    __slots__ = ()

    if TYPE_CHECKING:
        _int_index: int
        _str_index: str

        @property
        def name(self) -> str: ...

        @property
        def value(self) -> Any: ...

    def __init_subclass__(cls, *, type_key: str | None = None, frozen: bool = True, init: bool = True,
                          repr: bool = True, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if type_key is None:
            return
        payload_type = int if issubclass(cls, IntEnum) else str if issubclass(cls, StrEnum) else None
        own: set[str] = {k for k in ("__eq__", "__ne__", "__str__", "__hash__", "__repr__", "name") if k in cls.__dict__}
        binders, declarations = _collect_declarations(cls, payload_type)
        c_backed = _core._type_key_to_index(type_key) is not None
        if c_backed:
            c_class(type_key, init=init, repr=repr)(cls)
        else:
            py_class(type_key, frozen=frozen, structural_eq="singleton")(cls)
        if _index_of(cls) is None:
            raise TypeError(f"{cls.__name__}: `{type_key}` is not an enum type (it does not derive from ffi.Enum)")
        if payload_type is not None:
            _install_payload_behavior(cls, payload_type, own)
        _resolve(cls, binders, declarations, type_key, c_backed, payload_type)

    if TYPE_CHECKING:
        @classmethod
        def get(cls, index: int | str) -> Any:
            """Return the singleton at a canonical integer or string index (KeyError for none)."""
    else:
        # One C call: the class's type index, then the registry's lookup (ffk_enum_get_str / _int).
        get = classmethod(_core._enum_get)

    @classmethod
    def all_entries(cls) -> Iterator[Enum]:
        """Iterate over variants in registration order."""
        return iter(_ordered_entries(cls))

    @_ClassProperty
    def attr_dict(cls: type) -> Any:  # noqa: N805 - a class property
        """Return the live extensible-attribute dictionary."""
        state = _state(cls)
        return Dict({}) if state is None else state.attrs

    @classmethod
    def def_attr(cls, name: str, *, default: Any = MISSING) -> EnumAttrMap:
        """Return a per-variant extensible-attribute view."""
        return EnumAttrMap(cls, name, default=default)


class EnumAttrMap:
    """Mutable singleton-keyed view of one extensible enum attribute (a column of C's registry)."""

    __slots__ = ("_default", "_enum_cls", "_name")

    def __init__(self, enum_cls: type, name: str, *, default: Any = MISSING) -> None:
        self._enum_cls = enum_cls
        self._name = name
        self._default = default

    def _index(self, variant: object) -> int:
        if not isinstance(variant, self._enum_cls):
            raise TypeError(f"expected {self._enum_cls.__name__}, got {type(variant).__name__}")
        index = _index_of(self._enum_cls)
        if index is None:
            raise TypeError(f"{self._enum_cls.__name__} is not bound to an enum type")
        return index

    def __setitem__(self, variant: object, value: Any) -> None:
        _core._enum_attr_set(self._index(variant), self._name, variant, value)

    def __getitem__(self, variant: object) -> Any:
        value = _core._enum_attr_get(self._index(variant), self._name, variant, _ABSENT)
        if value is not _ABSENT:
            return value
        if self._default is not MISSING:
            return self._default
        raise KeyError(f"{variant!r} has no extensible attribute {self._name!r}")

    def __contains__(self, variant: object) -> bool:
        if not isinstance(variant, self._enum_cls):
            return False
        index = _index_of(self._enum_cls)
        return index is not None and bool(_core._enum_attr_has(index, self._name, variant))

    def get(self, variant: object, default: Any = None) -> Any:
        """Return a stored value or *default*."""
        if variant not in self:
            return default
        return self[variant]

    @property
    def name(self) -> str:
        """Return the extensible-attribute name."""
        return self._name


def _install_payload_behavior(cls: type, payload_type: type, own: set[str]) -> None:
    def eq(self: Any, other: object) -> Any:
        if isinstance(other, type(self)):
            return self.value == other.value
        if isinstance(other, payload_type):
            return self.value == other
        return NotImplemented

    def ne(self: Any, other: object) -> Any:
        result = eq(self, other)
        return NotImplemented if result is NotImplemented else not result

    def name(self: Any) -> str:
        return str(self._str_index)

    defaults: dict[str, Any] = {
        "__eq__": eq,
        "__ne__": ne,
        "__str__": lambda self: str(self.value),
        "__hash__": lambda self: hash(self.value),
    }
    for key, value in defaults.items():
        if key not in own:
            setattr(cls, key, value)
    if "name" not in own:
        setattr(cls, "name", property(name))
    if "__repr__" not in own:
        setattr(cls, "__repr__", lambda self: f"{type(self).__name__}.{self.name}")


@_c_class("ffi.IntEnum")
class IntEnum(Enum):
    """Enum whose ``value`` aliases its signed 64-bit integer index."""

    __slots__ = ()

    @property
    def value(self) -> int:
        """Return the canonical integer index."""
        return int(self._int_index)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        _reject_value_field(cls, "IntEnum")
        super().__init_subclass__(**kwargs)


@_c_class("ffi.StrEnum")
class StrEnum(Enum):
    """Enum whose ``name`` and ``value`` alias its string index."""

    __slots__ = ()

    @property
    def value(self) -> str:
        """Return the canonical string index."""
        return str(self._str_index)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        _reject_value_field(cls, "StrEnum")
        super().__init_subclass__(**kwargs)


def _collect_declarations(cls: type, payload_type: type | None) -> tuple[list[str], dict[str, _EnumEntry]]:
    annotations = _own_annotations(cls)
    binders = [name for name, annotation in annotations.items()
               if not name.startswith("_") and _is_class_var(annotation) and name not in cls.__dict__]
    fields = {name for name, annotation in annotations.items() if not _is_class_var(annotation)}
    declarations: dict[str, _EnumEntry] = {}
    for name, value in list(cls.__dict__.items()):
        if name.startswith("_") or name in fields:
            continue
        if isinstance(value, _EnumEntry):
            declarations[name] = value
        elif payload_type is not None and not (isinstance(value, (staticmethod, classmethod, property))
                                               or callable(value)):
            declarations[name] = _EnumEntry(value=value)
        else:
            continue
        delattr(cls, name)
    return binders, declarations


def _resolve(cls: type, binders: list[str], declarations: dict[str, _EnumEntry], type_key: str, c_backed: bool,
             payload_type: type | None) -> None:
    index = _index_of(cls)
    assert index is not None
    _core._enum_state(index, True)
    for alias in binders:
        instance = _core._enum_lookup(cls, alias)
        if instance is None:
            if c_backed:
                raise RuntimeError(f"{type_key!r} has no enum at string index {alias!r}")
            if payload_type is int:
                raise TypeError(f"{cls.__name__}.{alias} requires an integer value")
            instance = _create(cls, index, int(_core._enum_count(index)), alias, _EnumEntry(), c_backed, None)
        setattr(cls, alias, instance)

    for alias, declaration in declarations.items():
        int_index, str_index, rest = _indices(cls, alias, int(_core._enum_count(index)), declaration, payload_type)
        instance = _core._enum_lookup(cls, int_index if payload_type is int else str_index)
        if instance is None:
            if (_core._enum_lookup(cls, int_index) is not None
                    or _core._enum_lookup(cls, str_index) is not None):
                raise ValueError(f"duplicate enum index in {cls.__name__}.{alias}")
            instance = _create(cls, index, int_index, str_index, rest, c_backed, payload_type)
        setattr(cls, alias, instance)


def _indices(cls: type, alias: str, ordinal: int, declaration: _EnumEntry,
             payload_type: type | None) -> tuple[int, str, _EnumEntry]:
    kwargs = dict(declaration.kwargs)
    if "_int_index" in kwargs or "_str_index" in kwargs:
        raise TypeError(f"{cls.__name__}.{alias}: enum indices are inferred")
    if payload_type is None:
        return ordinal, alias, declaration
    if "value" not in kwargs:
        raise TypeError(f"{cls.__name__}.{alias} requires a {payload_type.__name__} value")
    value = kwargs.pop("value")
    if type(value) is not payload_type:
        raise TypeError(f"{cls.__name__}.{alias} value must be {payload_type.__name__}")
    rest = _EnumEntry(*declaration.args, **kwargs)
    if isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise OverflowError(f"enum integer index {value} is outside int64")
        return value, alias, rest
    return ordinal, typing.cast(str, value), rest


def _create(cls: type, index: int, int_index: int, str_index: str, declaration: _EnumEntry, c_backed: bool,
            payload_type: type | None) -> Any:
    try:
        if c_backed and not declaration.args and not declaration.kwargs:
            # C makes the member (ffk_enum_add): an IntEnum's int index is explicit, others' the ordinal.
            return _core._enum_add(index, str_index, int_index if payload_type is int else None)
        if c_backed and declaration.args:
            raise TypeError("C-backed enum entries require keyword fields")
        if c_backed:
            member = _core._object_create(cls.__tvm_ffi_type_info__.type_key,  # type: ignore[attr-defined]
                                          _int_index=int_index, _str_index=str_index, **declaration.kwargs)
        else:
            member = cls(*declaration.args, _int_index=int_index, _str_index=str_index, **declaration.kwargs)
        _core._enum_register(index, member)
        return member
    except Exception as err:  # noqa: BLE001 - tvm_ffi's message and type for any bad entry
        raise TypeError(f"{cls.__name__}.{str_index}: invalid enum entry: {err}") from None


def _own_annotations(cls: type) -> dict[str, Any]:
    from .dataclasses import _own_annotations as own

    return own(cls)


def _is_class_var(annotation: Any) -> bool:
    if annotation is ClassVar or typing.get_origin(annotation) is ClassVar:
        return True
    if isinstance(annotation, typing.ForwardRef):  # Python 3.14's lazily evaluated annotations
        annotation = annotation.__forward_arg__
    if isinstance(annotation, str):
        return annotation.replace(" ", "").startswith(("ClassVar", "typing.ClassVar"))
    return False


def _reject_value_field(cls: type, base_name: str) -> None:
    if "value" in cls.__dict__ or "value" in _own_annotations(cls):
        raise TypeError(f"{base_name} reserves `value` as its canonical index alias")
