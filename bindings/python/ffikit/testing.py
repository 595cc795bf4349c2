"""ffikit.testing: the ``testing.*`` Functions implemented in C (``testing.echo``,
``testing.apply``, ``testing.raise_error``, ``testing.add_one``, the typed
``testing.schema_id_*`` ...), as attributes of this module; the reflected test types
defined in C, with tvm_ffi's names and shapes (``TestObjectBase``, ``TestObjectDerived``,
``TestIntPair``; ``testing.TestUnregisteredObject`` deliberately has no class here, so it
comes back as an auto-made one); and C helpers the test suites need (making objects by
reflection, calling a Function from a native thread)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from . import _core
from ._core import Function, Object
from .container import Array, Map
from .dataclasses import IntEnum, StrEnum, c_class, entry

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

_core._testing_register()


# c_class, as tvm_ffi.testing declares them: dataclasses' is_dataclass, fields, asdict,
# astuple and replace work on them and their instances.
@c_class("testing.TestObjectBase")
class TestObjectBase(Object):
    """The base test type: ``v_i64`` (writable, default 10, doc "i64 field"), ``v_f64``
    (read-only, default 10.0), ``v_str`` (writable, default "hello") and the method
    ``add_i64(x)`` (``v_i64 + x``)."""

    __slots__ = ()
    __test__: ClassVar[bool] = False
    v_i64: int
    v_f64: float
    v_str: str
    if TYPE_CHECKING:
        def __init__(self, v_i64: int = ..., v_f64: float = ..., v_str: str = ...) -> None: ...
        def add_i64(self, x: int, /) -> int: ...


@c_class("testing.TestObjectDerived")
class TestObjectDerived(TestObjectBase):
    """TestObjectBase with two required fields more: ``v_map`` (a Map) and ``v_array``
    (an Array)."""

    __slots__ = ()
    __test__: ClassVar[bool] = False
    v_map: Map
    v_array: Array
    if TYPE_CHECKING:
        # C binds the required fields first (v_map, v_array), then the parent's defaulted ones.
        def __init__(self, v_map: Mapping[Any, Any], v_array: Sequence[Any], v_i64: int = ..., v_f64: float = ...,
                     v_str: str = ...) -> None: ...


@c_class("testing.TestIntPair")
class TestIntPair(Object):
    """Two read-only ints ``a`` and ``b`` (docs "Field `a`", "Field `b`"), constructed as
    ``TestIntPair(a, b)``, with the method ``sum()``."""

    __slots__ = ()
    __test__: ClassVar[bool] = False
    a: int
    b: int
    if TYPE_CHECKING:
        def __init__(self, a: int, b: int) -> None: ...
        def sum(self) -> int: ...


class _TestCxxIntEnum(IntEnum, type_key="testing.TestCxxIntEnum"):
    """An IntEnum C defines without members; these two are added here, as tvm_ffi.testing does."""

    low = entry(value=10)
    high = entry(value=20)


class _TestCxxStrEnum(StrEnum, type_key="testing.TestCxxStrEnum"):
    """A StrEnum C defines without members; these two are added here, as tvm_ffi.testing does."""

    add = entry(value="+")
    mul = entry(value="*")


@c_class("testing.TestCxxEnumHolder")
class _TestCxxEnumHolder(Object):
    """Two writable enum fields; an int / a str converts to the member (C's converter)."""

    __slots__ = ()
    __test__: ClassVar[bool] = False
    priority: _TestCxxIntEnum
    opcode: _TestCxxStrEnum
    if TYPE_CHECKING:
        def __init__(self, priority: _TestCxxIntEnum | int, opcode: _TestCxxStrEnum | str) -> None: ...


def create_object(type_key: str, **kwargs: Any) -> Object:
    """A new object of the reflected type ``type_key``, made by its constructor from the
    keyword arguments (fields not given take their defaults).

    Raises ValueError "Cannot find object type index for <key>" for an unknown key, and
    TypeError with the C message for a missing required field, an unknown field or a
    value of the wrong type.
    """
    obj: Object = _core._object_create(type_key, **kwargs)
    return obj


def make_unregistered_object() -> Object:
    """A ``testing.TestUnregisteredObject`` (``v1=41``, ``v2=42``), a type with no Python
    class registered: it comes back as an auto-made class that still has its fields and
    methods."""
    make = _core._get_global_func("testing.make_unregistered_object", False)
    assert make is not None  # allow_missing=False raises instead
    obj: Object = make()
    return obj


def __getattr__(name: str) -> Function:
    f = _core._get_global_func("testing." + name, True)
    if f is None:
        raise AttributeError(f"module 'ffikit.testing' has no attribute '{name}'")
    globals()[name] = f
    return f


def call_from_native_thread(f: Function, times: int, *args: Any) -> Any:
    """Calls ``f(*args)`` ``times`` times from a new native thread (one Python has never
    seen) and returns the last result, or raises what the call raised."""
    return _core._call_from_native_thread(f, times, *args)


_OWN = {"call_from_native_thread", "create_object", "make_unregistered_object", "TestObjectBase",
        "TestObjectDerived", "TestIntPair", "_TestCxxIntEnum", "_TestCxxStrEnum", "_TestCxxEnumHolder"}


def __dir__() -> list[str]:
    names = [n[len("testing."):] for n in _core.list_global_func_names() if n.startswith("testing.")]
    return sorted(set(names) | _OWN)
