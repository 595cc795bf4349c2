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


# ---- pickling: the graph of containers and objects reachable from one ---------------------
#
# The one pickle encoder for containers and for objects made by reflection (whose state is
# their fields; ffk_object_is_reflection_made). A pickle holds the list of nodes reachable
# from the value, the value being node 0; a node is (kind, payload):
#
#   _ARRAY, _LIST   [element, ...]
#   _MAP, _DICT     [(key, value), ...] in insertion order
#   _OBJECT         (type key, module to import first or None, [field value, ...]) with every
#                   field, inherited and read-only ones too, in the C type's field order
#
# where an element, key or field value is a _Ref (node number) for a container or an
# object made by reflection, and else a leaf that pickles itself: a scalar, a str, a tensor
# (out-of-band at protocol 5), a Function (by its global name), another object (its own
# __reduce__). Every C object is visited once, by its handle: a container or object
# reached twice is one node, and a leaf C object reached twice is handed to the pickler as
# the same Python wrapper (its first), which pickle's memo then writes once. Rebuilding
# makes every List, Dict and object first (objects at their defaults), then fills them
# (object fields through ffk_object_init_fields, read-only ones too), so sharing and cycles
# through Lists, Dicts and object fields come back. The module of an object's class is the
# class's __module__ (None for a class ffikit made itself). A graph with objects pickles as
# (_rebuild, (_ImportFirst(modules), nodes)): unpickling loads the arguments in order, so
# the modules are imported before any node or leaf is read, as pickle imports a class
# before its instances (a Function that such a module registers then resolves too); a
# module that does not import is skipped (an unknown type key then raises). A graph of
# containers only keeps the older form (_rebuild, (nodes,)). Sharing spans one pickled
# value: two values pickled separately (two arguments of a call) that share a List share
# it no more.


class _Ref(int):
    """In a pickled graph: the container or object at this node number."""

    __slots__ = ()


class _Pairs:
    """(key, value) pairs in order, read by Map()/Dict() through items() (keeps 1, True, 1.0 apart)."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[Any, Any]]) -> None:
        self.pairs = pairs

    def items(self) -> list[tuple[Any, Any]]:
        return self.pairs


_ARRAY, _LIST, _MAP, _DICT, _OBJECT = range(5)
_type_key_of = _core.Object.type_key.__get__  # not obj.type_key: a field may have that name


def _module_of(obj: Any) -> str | None:
    cls = type(obj)
    if getattr(cls, "__ffi_auto_class__", False):
        return None  # a class ffikit made: it lives in no module
    module = getattr(cls, "__module__", None)
    return module if isinstance(module, str) else None


def _children(x: Any) -> tuple[int, list[Any]]:
    """A container's or object's node kind and the values its payload refers to, in order
    (a Map's or Dict's keys and values alternate)."""
    if isinstance(x, (Map, Dict)):
        return (_MAP if isinstance(x, Map) else _DICT), [e for kv in x._list(_core.MAP_ITEMS) for e in kv]
    if isinstance(x, (Array, List)):
        return (_ARRAY if isinstance(x, Array) else _LIST), list(x if isinstance(x, Array) else x._snapshot())
    return _OBJECT, list(_core._object_field_values(x))


def _payload(kind: int, x: Any, refs: list[Any]) -> Any:
    if kind in (_MAP, _DICT):
        return list(zip(refs[0::2], refs[1::2]))
    if kind == _OBJECT:
        return (_type_key_of(x), _module_of(x), refs)
    return refs


def _encode(root: Any) -> list[tuple[int, Any]]:
    # A depth-first walk with its own stack (a Python recursion would stop at the
    # interpreter's recursion limit, about 500 levels here, with a RecursionError that names
    # no limit of ours). Nodes are numbered in the order they are first met, the root 0;
    # nesting deeper than STRUCTURAL_MAX_DEPTH is the RuntimeError every C walk raises.
    nodes: list[Any] = []
    index: dict[int, int] = {}
    leaves: dict[int, Any] = {}  # handle -> the first wrapper of a leaf C object
    keep: list[Any] = []  # every visited container and object, so no address is reused meanwhile
    stack: list[list[Any]] = []  # [node number, kind, value, children, next child, refs] per level
    limit = _core.STRUCTURAL_MAX_DEPTH

    def ref(x: Any) -> Any:
        if isinstance(x, (Array, List, Map, Dict)):
            pass
        elif isinstance(x, _core.Object):
            if not _core._object_is_reflection_made(x) or _core._enum_is_member(x):  # a member pickles by name
                return leaves.setdefault(x.__chandle__(), x)
        else:
            return x
        h = x.__chandle__()
        i = index.get(h)
        if i is None:
            if len(stack) == limit:
                _core._structural_too_deep()
            keep.append(x)
            i = index[h] = len(nodes)
            nodes.append(None)
            kind, children = _children(x)
            stack.append([i, kind, x, children, 0, []])
        return _Ref(i)

    ref(root)
    while stack:
        top = stack[-1]
        children = top[3]
        if top[4] < len(children):
            child = children[top[4]]
            top[4] += 1
            top[5].append(ref(child))  # may push the child's own level
        else:
            stack.pop()
            nodes[top[0]] = (top[1], _payload(top[1], top[2], top[5]))
    return nodes


def _import_modules(modules: tuple[str, ...]) -> tuple[str, ...]:
    """What an _ImportFirst unpickles as: imports each module (skipping one that does not import)."""
    import importlib

    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            pass  # the type may be registered another way; an unknown key raises in _rebuild
    return modules


class _ImportFirst:
    """In a pickle, ahead of the nodes: the modules to import before anything else is read."""

    __slots__ = ("modules",)

    def __init__(self, modules: tuple[str, ...]) -> None:
        self.modules = modules

    def __reduce__(self) -> Any:
        return (_import_modules, (self.modules,))


def _rebuild(first: Any, nodes: list[tuple[int, Any]] | None = None) -> Any:
    """Unpickles a graph: _rebuild(nodes), or _rebuild(imported modules, nodes)."""
    if nodes is None:
        nodes = first
    built: list[Any] = [List() if kind == _LIST else Dict() if kind == _DICT
                        else _core._object_from_fields(payload[0], {}) if kind == _OBJECT else None
                        for kind, payload in nodes]

    def refs_of(kind: int, payload: Any) -> list[Any]:
        return [e for kv in payload for e in kv] if kind == _MAP else payload

    def get(x: Any) -> Any:
        # An Array or Map is made from its elements, so those come first: bottom-up, with
        # an explicit stack, so a chain of any depth rebuilds. Lists, Dicts and objects
        # already exist (filled below), which is how cycles through them come back; an
        # Array or Map that reaches itself through Arrays and Maps alone cannot be made.
        if type(x) is not _Ref or built[x] is not None:
            return built[x] if type(x) is _Ref else x
        path = {x}  # the nodes on the stack: meeting one again is a cycle
        stack: list[list[Any]] = [[x, refs_of(*nodes[x]), 0]]  # [node number, refs, next ref] per level
        while stack:
            top = stack[-1]
            i, refs = top[0], top[1]
            while top[2] < len(refs) and (type(refs[top[2]]) is not _Ref or built[refs[top[2]]] is not None):
                top[2] += 1
            if top[2] < len(refs):
                e = refs[top[2]]
                if e in path:
                    raise ValueError(f"invalid pickle: node {e} is an Array or Map that contains itself")
                path.add(e)
                stack.append([e, refs_of(*nodes[e]), 0])
                continue
            stack.pop()
            path.discard(i)
            items = [built[e] if type(e) is _Ref else e for e in refs]
            if nodes[i][0] == _ARRAY:
                built[i] = Array(items)
            else:
                built[i] = Map(_Pairs(list(zip(items[0::2], items[1::2]))))
        return built[x]

    for i, (kind, payload) in enumerate(nodes):
        if kind == _LIST:
            built[i].extend([get(e) for e in payload])
        elif kind == _DICT:
            built[i]._update(_Pairs([(get(k), get(v)) for k, v in payload]))
        elif kind == _OBJECT:
            _core._object_init_fields(built[i], [get(v) for v in payload[2]])
        else:
            get(_Ref(i))
    return built[0]


def _reduce(self: Any) -> Any:
    nodes = _encode(self)
    modules = tuple(dict.fromkeys(p[1] for k, p in nodes if k == _OBJECT and p[1] is not None))
    if any(k == _OBJECT for k, _ in nodes):
        return (_rebuild, (_ImportFirst(modules), nodes))
    return (_rebuild, (nodes,))


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
