"""Array, List, Map and Dict: the ffikit containers seen from Python.

``Array`` and ``Map`` are immutable here (copy-on-write in C: a change through one handle
never shows through another); ``List`` and ``Dict`` are shared and mutable in C. Keys
follow ffikit's semantics, which differ from ``dict``'s: ``1``, ``True`` and ``1.0`` are
three different keys.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from . import _core
from ._core import Object


def _index(self: Object, i: Any) -> int:
    if isinstance(i, bool) or not hasattr(i, "__index__"):
        raise TypeError(f"{type(self).__name__} indices must be integers or slices, not {type(i).__name__}")
    index: int = i.__index__()
    return index


class _SeqBase(Object):
    __slots__ = ()

    def __len__(self) -> int:
        n: int = _core._len(self)
        return n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return _core._to_list(self)[i]
        return _core._seq_get(self, _index(self, i))

    def __iter__(self) -> Iterator[Any]:
        return iter(_core._to_list(self))

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, (str, bytes, Mapping)) or not isinstance(other, (Sequence, _SeqBase)):
            return NotImplemented
        return _core._structural_equal(self, other)

    def __ne__(self, other: Any) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return _core._structural_hash(self)

    def __reduce__(self) -> Any:
        return (type(self), (list(self),))


class Array(_SeqBase):
    """An immutable sequence (copy-on-write in C). ``Array(iterable)``."""

    __slots__ = ()

    def __new__(cls, iterable: Any = ()) -> Array:
        if not hasattr(iterable, "__iter__"):
            raise TypeError(f"Array() expects an iterable, got {type(iterable).__name__}")
        made: Array = _core._make(0, list(iterable))
        return made


class List(_SeqBase):
    """A shared mutable sequence (every handle sees every change). ``List(iterable=())``."""

    __slots__ = ()

    def __new__(cls, iterable: Any = ()) -> List:
        made: List = _core._make(1, list(iterable))
        return made


class _MapBase(Object):
    __slots__ = ()

    def __len__(self) -> int:
        n: int = _core._len(self)
        return n

    def __getitem__(self, key: Any) -> Any:
        return _core._map_get(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        return _core._map_get(self, key, default)

    def __contains__(self, key: Any) -> bool:
        sentinel = _MISSING
        return _core._map_get(self, key, sentinel) is not sentinel

    def __iter__(self) -> Iterator[Any]:
        return iter(_core._to_list(self, 0))

    def keys(self) -> list[Any]:
        return _core._to_list(self, 0)

    def values(self) -> list[Any]:
        return _core._to_list(self, 1)

    def items(self) -> list[tuple[Any, Any]]:
        return _core._to_list(self, 2)

    def __eq__(self, other: Any) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return _core._structural_equal(self, other)

    def __ne__(self, other: Any) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return _core._structural_hash(self)

    def __reduce__(self) -> Any:
        return (type(self), (dict(self.items()),))


_MISSING = object()


class Map(_MapBase):
    """An immutable mapping (copy-on-write in C). ``Map(mapping)`` reads ``mapping.items()``."""

    __slots__ = ()

    def __new__(cls, mapping: Any = None) -> Map:
        made: Map = _core._make(2, list(mapping.items()) if mapping is not None else [])
        return made


class Dict(_MapBase):
    """A shared mutable mapping. ``Dict(mapping=None)``."""

    __slots__ = ()

    def __new__(cls, mapping: Any = None) -> Dict:
        made: Dict = _core._make(3, list(mapping.items()) if mapping is not None else [])
        return made


Sequence.register(Array)
Sequence.register(List)
Mapping.register(Map)
Mapping.register(Dict)
