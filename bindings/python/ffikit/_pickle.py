"""Pickling of ffikit's containers and of objects made by reflection: one graph encoder.

The one pickle encoder for containers and for objects made by reflection (whose state is
their fields; ffk_object_is_reflection_made). A pickle holds the list of nodes reachable
from the value, the value being node 0; a node is (kind, payload):

  _ARRAY, _LIST   [element, ...]
  _MAP, _DICT     [(key, value), ...] in insertion order
  _OBJECT         (type key, module to import first or None, [field value, ...]) with every
                  field, inherited and read-only ones too, in the C type's field order

where an element, key or field value is a _Ref (node number) for a container or an
object made by reflection, and else a leaf that pickles itself: a scalar, a str, a tensor
(out-of-band at protocol 5), a Function (by its global name), another object (its own
__reduce__). Every C object is visited once, by its handle: a container or object
reached twice is one node, and a leaf C object reached twice is handed to the pickler as
the same Python wrapper (its first), which pickle's memo then writes once. Rebuilding
makes every List, Dict and object first (objects at their defaults), then fills them
(object fields through ffk_object_init_fields, read-only ones too), so sharing and cycles
through Lists, Dicts and object fields come back. The module of an object's class is the
class's __module__ (None for a class ffikit made itself). A graph with objects pickles as
(_rebuild, (_ImportFirst(modules), nodes)): unpickling loads the arguments in order, so
the modules are imported before any node or leaf is read, as pickle imports a class
before its instances (a Function that such a module registers then resolves too); a
module that does not import is skipped (an unknown type key then raises). A graph of
containers only keeps the older form (_rebuild, (nodes,)). Sharing spans one pickled
value: two values pickled separately (two arguments of a call) that share a List share
it no more.
"""
from __future__ import annotations

from typing import Any

from . import _core


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


_CONTAINERS = (_core.ArrayBase, _core.ListBase, _core.MapBase)  # DictBase is a MapBase


def _children(x: Any) -> tuple[int, list[Any]]:
    """A container's or object's node kind and the values its payload refers to, in order
    (a Map's or Dict's keys and values alternate)."""
    if isinstance(x, _core.MapBase):
        return (_DICT if isinstance(x, _core.DictBase) else _MAP), [e for kv in x._list(_core.MAP_ITEMS) for e in kv]
    if isinstance(x, _core.ArrayBase):
        return _ARRAY, list(x)
    if isinstance(x, _core.ListBase):
        return _LIST, list(x._snapshot())
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
        if isinstance(x, _CONTAINERS):
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
    from .container import Array, Dict, List, Map  # the Python classes (container.py imports this module)

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
