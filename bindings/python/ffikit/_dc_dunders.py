"""The generated dunders of ``ffikit.dataclasses`` classes (``__init__``, ``__eq__``,
ordering, ``__hash__``, ``__replace__``) and the standard module functions over them
(:func:`is_dataclass`, :func:`fields`, :func:`asdict`, :func:`astuple`, :func:`replace`);
part of ffikit.dataclasses, which re-exports the public names."""
from __future__ import annotations

import copy as _copy
import inspect
from typing import Any, Callable, TypeVar

from . import _core
from ._core import Object
from ._dc_fields import MISSING, Field, _init_property_funcs
from ._object import Bytes, String
from .container import Array, Dict, List, Map

_O = TypeVar("_O")

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
