"""Array, List, Map and Dict: the ffikit containers as Python collections.

``Array`` and ``Map`` are immutable here (copy-on-write in C: a change made in C through
another handle never shows through this one); ``List`` and ``Dict`` are shared and mutable:
every holder, in C, Python or Rust, sees every change, and each single operation is
atomic, so any number of threads may use one at once. ``Tuple`` is ``Array``.

The hot operations (``len``, indexing, lookup, ``in``, iteration, construction,
``List.append``) are C slots of the base classes in ``ffikit._core``; the classes here add
the ``collections.abc`` mixins (they are real subclasses of ``Sequence``,
``MutableSequence``, ``Mapping`` and ``MutableMapping``), the views and pickling.

Keys follow ffikit's semantics, which differ from ``dict``'s: ``1``, ``True`` and ``1.0``
are three different keys; strings and bytes compare by content, other objects (including
containers) by identity. ``in``, ``index`` and ``count`` on a sequence compare elements
structurally, with the same rule for scalars (``1.0 in Array([1])`` is False).
"""
from __future__ import annotations

from collections.abc import ItemsView as _ItemsView
from collections.abc import Iterator, Mapping, MutableMapping, MutableSequence, Sequence
from collections.abc import KeysView as _KeysView
from collections.abc import ValuesView as _ValuesView
from types import GenericAlias
from typing import Any

from . import _core

_MISSING = object()


class _LiveView:
    """What the three views share: reversed() and a repr that lists the current contents."""

    __slots__ = ()
    _part = _core.MAP_KEYS  # which part of the entries: the C ffk_map_part that _list() takes
    _mapping: Any

    def __reversed__(self) -> Iterator[Any]:
        return reversed(self._mapping._list(self._part))  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._mapping._list(self._part)!r})"


class KeysView(_LiveView, _KeysView):  # type: ignore[type-arg]
    """A live view of a Map's or Dict's keys, in insertion order (set operations as dict's)."""

    __slots__ = ()
    _part = _core.MAP_KEYS

    def __iter__(self) -> Iterator[Any]:
        return self._mapping._iter_keys()  # type: ignore[no-any-return]


class ValuesView(_LiveView, _ValuesView):  # type: ignore[type-arg]
    """A live view of a Map's or Dict's values, in insertion order."""

    __slots__ = ()
    _part = _core.MAP_VALUES

    def __iter__(self) -> Iterator[Any]:
        return self._mapping._iter_values()  # type: ignore[no-any-return]


class ItemsView(_LiveView, _ItemsView):  # type: ignore[type-arg]
    """A live view of a Map's or Dict's (key, value) pairs, in insertion order (set operations as dict's)."""

    __slots__ = ()
    _part = _core.MAP_ITEMS

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        return self._mapping._iter_items()  # type: ignore[no-any-return]


# Pickling is ffikit._pickle's (one graph encoder for containers and reflected objects).
# Its names stay importable from here: pickles written before it moved name
# ffikit.container._rebuild and ffikit.container._import_modules.
from ._pickle import _ARRAY, _DICT, _LIST, _MAP, _OBJECT, _encode, _import_modules, _ImportFirst, _Pairs  # noqa: E402,F401
from ._pickle import _rebuild, _reduce, _Ref  # noqa: E402,F401


# ---- the four classes --------------------------------------------------------------------


class Array(_core.ArrayBase, Sequence):  # type: ignore[type-arg]
    """Array(iterable=()) - an immutable sequence backed by an ffikit Array (copy-on-write in C).

    Behaves like ``tuple``: indexing with negative indices, slices give a Python ``list``,
    ``a + iterable`` and ``iterable + a`` give a new Array, ``==`` compares element-wise with
    any Array, List or plain sequence (not str/bytes), ``hash`` is structural. Lists and
    dicts among the elements are stored as Arrays and Maps. ``in``/``index``/``count`` use
    ffikit's comparison: ``1``, ``True`` and ``1.0`` are different values.
    """

    __slots__ = ()
    __class_getitem__: Any = classmethod(GenericAlias)
    __reduce__ = _reduce

    def __copy__(self) -> Array:
        return self


class List(_core.ListBase, MutableSequence):  # type: ignore[type-arg]
    """List(iterable=()) - a shared mutable sequence backed by an ffikit List.

    Behaves like ``list`` (append, insert with clamping, pop, extend, clear, reverse,
    remove, slice assignment and deletion with extended slices), but every holder of the
    same C List sees every change, and each single operation is atomic across threads.
    Iterating while the List changes raises RuntimeError. ``hash`` is structural (like
    Array's), so a List used as a dict key must not change afterwards. Values compare with
    ffikit's rules: ``1``, ``True`` and ``1.0`` are different.
    """

    __slots__ = ()
    __class_getitem__: Any = classmethod(GenericAlias)
    __reduce__ = _reduce

    def remove(self, value: Any) -> None:
        """Removes the first element equal to value (ValueError when there is none)."""
        try:
            i = self.index(value)
        except ValueError:
            raise ValueError("List.remove(x): x not in List") from None
        del self[i]

    def __reversed__(self) -> Iterator[Any]:
        return iter(reversed(self._snapshot()))


class _MapMixin:
    __slots__ = ()

    def keys(self) -> KeysView:
        """A live view of the keys in insertion order."""
        return KeysView(self)  # type: ignore[arg-type]

    def values(self) -> ValuesView:
        """A live view of the values in insertion order."""
        return ValuesView(self)  # type: ignore[arg-type]

    def items(self) -> ItemsView:
        """A live view of the (key, value) pairs in insertion order."""
        return ItemsView(self)  # type: ignore[arg-type]

    def __reversed__(self) -> Iterator[Any]:
        return reversed(self._list(_core.MAP_KEYS))  # type: ignore[attr-defined]

    __reduce__ = _reduce


class Map(_MapMixin, _core.MapBase, Mapping):  # type: ignore[type-arg]
    """Map(mapping=None) - an immutable mapping backed by an ffikit Map (copy-on-write in C).

    Built from anything with ``.items()`` (AttributeError otherwise). Behaves like
    ``types.MappingProxyType``: ``m[k]`` (KeyError when missing), ``get``, ``in``, ``len``
    and live ``keys()/values()/items()`` views in insertion order. ``==`` and ``hash`` are
    structural and order-insensitive, and a Map only equals a Map.

    Keys follow ffikit's semantics, unlike ``dict``: ``1``, ``True`` and ``1.0`` are three
    different keys; strings and bytes match by content, containers and other objects by
    identity.
    """

    __slots__ = ()
    __class_getitem__: Any = classmethod(GenericAlias)

    def __copy__(self) -> Map:
        return self


class Dict(_MapMixin, _core.DictBase, MutableMapping):  # type: ignore[type-arg]
    """Dict(mapping=None) - a shared mutable mapping backed by an ffikit Dict.

    Behaves like ``dict`` (``d[k] = v``, ``del d[k]``, pop, popitem, setdefault, update from
    a mapping, pairs or keywords, clear, ``|`` and ``|=``, live views in insertion order),
    but every holder of the same C Dict sees every change and each single operation is
    atomic across threads. Iterating while keys are added or removed raises RuntimeError.
    ``==`` and ``hash`` are structural; a Dict only equals a Dict, and one used as a key
    must not change afterwards.

    Keys follow ffikit's semantics, unlike ``dict``: ``1``, ``True`` and ``1.0`` are three
    different keys; strings and bytes match by content, containers and other objects by
    identity.
    """

    __slots__ = ()
    __class_getitem__: Any = classmethod(GenericAlias)

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Sets the entries of a mapping (or an iterable of pairs), then of the keywords."""
        if isinstance(other, (Map, Dict, dict)):
            self._update(other)
        elif hasattr(other, "keys"):
            self._update(_Pairs([(k, other[k]) for k in other.keys()]))
        else:
            pairs = []
            for n, item in enumerate(other):
                try:
                    k, v = item
                except TypeError:
                    raise TypeError(f"cannot convert dictionary update sequence element #{n} to a sequence") from None
                except ValueError:
                    raise ValueError(
                        f"dictionary update sequence element #{n} has length {len(item)}; 2 is required"
                    ) from None
                pairs.append((k, v))
            self._update(_Pairs(pairs))
        if kwargs:
            self._update(kwargs)

    def popitem(self) -> tuple[Any, Any]:
        """Removes and returns the last (key, value) pair (KeyError when empty)."""
        while True:
            keys = self._list(_core.MAP_KEYS)
            if not keys:
                raise KeyError("popitem(): dictionary is empty")
            value = self.pop(keys[-1], _MISSING)
            if value is not _MISSING:  # else another thread took it first: try again
                return keys[-1], value

    def __or__(self, other: Any) -> Any:
        if not isinstance(other, Mapping):
            return NotImplemented
        new = self.copy()
        new.update(other)
        return new

    def __ror__(self, other: Any) -> Any:
        if not isinstance(other, Mapping):
            return NotImplemented
        new = Dict(other)
        new.update(self)
        return new

    def __ior__(self, other: Any) -> Dict:
        self.update(other)
        return self


Tuple = Array  # tvm_ffi backs tuples by Array

__all__ = ["Array", "List", "Map", "Dict", "Tuple", "KeysView", "ValuesView", "ItemsView"]
