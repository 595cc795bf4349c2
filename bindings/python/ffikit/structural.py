"""Structural equality, hashing and mismatch reporting (tvm_ffi's ``tvm_ffi.structural``
functions, with the same names and signatures).

``==`` on ffikit objects is identity (as in tvm_ffi); these functions look inside:
containers compare by contents (an Array never equals a List), objects of reflected
types field by field (fields declared with ``compare=False`` are skipped; a type's
``__s_equal__`` / ``__s_hash__`` hooks replace the field walk), and everything else with
key semantics (``1``, ``True`` and ``1.0`` stay distinct, NaN equals NaN, strings by
content). Cycles end; nesting deeper than 1000 levels is a RuntimeError. The rules are
the C library's (``ffikit/structural.h``): C, Python and Rust give the same answers.

Python values convert as function arguments do (a list becomes an Array, a dict a Map),
so ``structural_equal([1, 2], ffikit.Array([1, 2]))`` is True.

Variables. A ``py_class(structural_eq="var")`` object is a variable: it equals another
only where the walk binds them to each other, inside a ``field(structural_eq="def")``
(``Lambda(x, x + 1)`` equals ``Lambda(y, y + 1)``) or, with ``map_free_vars=True``, wherever
it meets them first; bindings are one to one. ``structural_eq="dag"`` objects must be
shared alike on both sides. The hash follows: bound variables hash by binding order.

Options. ``map_free_vars`` (tvm_ffi's): free variables, those met outside any definition
field, bind on first meeting instead of comparing by identity. ``skip_tensor_content`` is
accepted and changes nothing: tensors always compare and hash by identity (the same tensor
object), never by their data, so their content is always skipped.
"""
from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence
from enum import IntEnum
from typing import TYPE_CHECKING, Any

from . import _core
from ._core import Object
from .registry import get_global_func, register_object

if TYPE_CHECKING:
    from .access_path import AccessPath

__all__ = ["DefRegionKind", "InplaceMode", "StructuralKey", "StructuralMutator", "StructuralVisitor", "VisitInterrupt",
           "WalkOrder", "WalkResult", "get_first_structural_mismatch", "structural_equal", "structural_hash",
           "structural_map", "structural_mutate", "structural_visit", "structural_walk"]


def structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False, skip_tensor_content: bool = False) -> bool:
    """Whether ``lhs`` and ``rhs`` are structurally equal (see the module doc), with free
    variables mapped one to one when ``map_free_vars``.

    ``structural_equal([1, 2, 3], [1, 2, 3])`` is True, ``structural_equal([1, 2], [1, 3])``
    False. Raises TypeError for a value that does not convert, RuntimeError for nesting
    deeper than the limit, and what a type's ``__s_equal__`` hook raises.
    """
    result: bool = _core._structural_equal(lhs, rhs, map_free_vars, skip_tensor_content)
    return result


def structural_hash(value: Any, map_free_vars: bool = False, skip_tensor_content: bool = False) -> int:
    """The structural hash of ``value``, an int in ``[0, 2**64)``: structurally equal
    values (under the same ``map_free_vars``) hash alike (for hash tables and quick rejects; confirm with
    :func:`structural_equal`). Tensors, Functions and opaque objects hash by identity.
    Errors as :func:`structural_equal`.
    """
    h: int = _core._structural_hash(value, map_free_vars, skip_tensor_content)
    return h


def get_first_structural_mismatch(lhs: Any, rhs: Any, map_free_vars: bool = False,
                                  skip_tensor_content: bool = False) -> tuple[AccessPath, AccessPath] | None:
    """Where ``lhs`` and ``rhs`` first differ: a pair of :class:`ffikit.access_path.AccessPath`
    (the place in ``lhs``, the place in ``rhs``), or None when they are structurally equal.

    Paths print as tvm_ffi's do: ``<root>.body[1]["k"]``; a side that lacks the element
    the other has ends in a missing step (``[<missing:2>]``). "First" follows the
    equality walk: sequences by index, fields in field order, map entries in ``lhs``'s
    order. Errors as :func:`structural_equal`.
    """
    from . import access_path as _access_path  # noqa: F401 - registers the AccessPath classes

    result: tuple[AccessPath, AccessPath] | None = _core._first_structural_mismatch(
        lhs, rhs, map_free_vars, skip_tensor_content)
    return result


# ---- Walking and rewriting (ffikit/structural_visit.h; tvm_ffi's names and behaviour) ------


class WalkOrder(IntEnum):
    """Whether a walk's callbacks run before (``PREORDER``) or after (``POSTORDER``) the children."""

    PREORDER = 0
    POSTORDER = 1


class WalkResult(IntEnum):
    """What a :func:`structural_walk` callback returns: ``ADVANCE`` (or None) to go into the
    value's children, ``SKIP`` to leave them out (pre-order). Return a :class:`VisitInterrupt`
    to stop the whole walk."""

    ADVANCE = 0
    SKIP = 1


class InplaceMode(IntEnum):
    """The mode a :func:`structural_mutate` callback may ask for. ffikit never rewrites in
    place, so callbacks always receive ``DISALLOW``."""

    DISALLOW = 0
    ALLOW = 1


class DefRegionKind(IntEnum):
    """The definition region of a position: ``NONE``, ``DEF_PATTERN`` (under a
    ``field(structural_eq="def")``) or ``DEF_SIMPLE`` (under ``"def-simple"``)."""

    NONE = 0
    DEF_PATTERN = 1
    DEF_SIMPLE = 2


def _g(name: str) -> Any:
    return get_global_func(name)


_HOLDING: dict[str, Any] = {}


def _holding_gil(name: str) -> Any:
    """The global Function ``name`` through a wrapper of its own that keeps the GIL while C
    runs. The traversals call a Python callback at most of the values they meet: released
    around the C call, the GIL would be taken back and dropped again for every callback (a
    mutex and a condition variable each way: two thirds of a no-op callback's cost). The
    wrapper is private to this module, so ``get_global_func`` users keep the default."""
    fn = _HOLDING.get(name)
    if fn is None:
        fn = get_global_func(name)
        if fn is None:  # registered by the C library at load: only a broken install lacks it
            raise RuntimeError(f"the global function {name!r} is not registered")
        fn.release_gil = False
        _HOLDING[name] = fn
    return fn


@register_object("ffi.StructuralKey")
class StructuralKey(Object):
    """A value wrapped to compare and hash structurally, its hash computed once: usable as
    a Python dict key (``{StructuralKey([1, 2]): "a"}[StructuralKey([1, 2])] == "a"``)."""

    def __init__(self, key: Any) -> None:
        self.__init_handle_by_constructor__(_g("ffi.StructuralKey"), key)

    def __hash__(self) -> int:
        h: int = self.hash_i64 & 0xFFFFFFFFFFFFFFFF  # type: ignore[attr-defined]
        return h

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, StructuralKey) and bool(_g("ffi.StructuralKeyEqual")(self, other))


@register_object("ffi.VisitInterrupt")
class VisitInterrupt(Object):
    """Returned by a walk or visit callback to stop the traversal; the traversal returns it,
    its ``value`` (None by default) the payload."""

    def __init__(self, value: Any = None) -> None:
        self.__init_handle_by_constructor__(_g("ffi.VisitInterrupt"), value)


@register_object("ffi.StructuralVisitor")
class StructuralVisitor(Object):
    """The visitor a :func:`structural_visit` callback receives; valid while the visit runs
    (afterwards its methods raise RuntimeError)."""

    def visit(self, value: Any) -> VisitInterrupt | None:
        """Visits ``value`` through the callbacks; a VisitInterrupt when the visit stopped."""
        result: VisitInterrupt | None = _g("ffi.StructuralVisitorVisit")(self, value)
        return result

    def default_visit(self, value: Any) -> VisitInterrupt | None:
        """Visits the children of ``value`` (each through the callbacks)."""
        result: VisitInterrupt | None = _g("ffi.StructuralVisitorDefaultVisit")(self, value)
        return result

    def def_region_kind(self) -> DefRegionKind:
        """The definition region of the value being visited."""
        return DefRegionKind(_g("ffi.StructuralVisitorDefRegionKind")(self))

    def with_def_region_kind(self, kind: int, callback: Callable[[], Any]) -> Any:
        """Runs ``callback()`` with region ``kind`` (no change inside a pattern region)."""
        return _g("ffi.StructuralVisitorWithDefRegionKind")(self, int(kind), callback)


@register_object("ffi.StructuralMutator")
class StructuralMutator(Object):
    """The mutator a :func:`structural_mutate` callback receives; valid while the call runs."""

    def mutate(self, value: Any) -> Any:
        """``value`` rewritten through the callbacks (the same object when nothing changed)."""
        return _g("ffi.StructuralMutatorMutate")(self, value)

    def default_mutate(self, value: Any) -> Any:
        """``value``'s default rewrite: its children through the callbacks, rebuilt only when
        one changed; variables through the remap table."""
        return _g("ffi.StructuralMutatorDefaultMutate")(self, value)

    def var_remap_get(self, var: Object) -> Any | None:
        """The replacement recorded for ``var`` (an object), or None."""
        return _g("ffi.StructuralMutatorVarRemapGet")(self, var)

    def var_remap_set(self, var: Object, mapped_value: Any) -> None:
        """Records ``mapped_value`` as the replacement for ``var`` (an object)."""
        _g("ffi.StructuralMutatorVarRemapSet")(self, var, mapped_value)

    def def_region_kind(self) -> DefRegionKind:
        """The definition region of the value being rewritten."""
        return DefRegionKind(_g("ffi.StructuralMutatorDefRegionKind")(self))

    def with_def_region_kind(self, kind: int, callback: Callable[[], Any]) -> Any:
        """Runs ``callback()`` with region ``kind`` (no change inside a pattern region)."""
        return _g("ffi.StructuralMutatorWithDefRegionKind")(self, int(kind), callback)


# C's type indices (ffikit/object.h) of the Python types and ffikit's built-in classes.
_BUILTIN_TYPE_INDEX: dict[Any, int] = {int: 1, bool: 2, float: 3, str: 65, bytes: 66, type(None): 0}


def _builtin_type_index(t: Any) -> int | None:
    if len(_BUILTIN_TYPE_INDEX) == 6:
        import ffikit
        _BUILTIN_TYPE_INDEX.update({
            ffikit.Object: 64, ffikit.String: 65, ffikit.Bytes: 66, ffikit.Function: 68, ffikit.Shape: 69,
            ffikit.Tensor: 70, ffikit.Array: 71, ffikit.Map: 72, ffikit.Module: 73, ffikit.List: 75,
            ffikit.Dict: 76})
    return _BUILTIN_TYPE_INDEX.get(t)


def _type_index(t: Any, api: str) -> int:
    if t is object or t is typing.Any:
        return -1
    builtin = _builtin_type_index(t)
    if builtin is not None:
        return builtin
    info = getattr(t, "__tvm_ffi_type_info__", None) if isinstance(t, type) else None
    if info is None:
        raise TypeError(f"{api} callback type must be a supported builtin, typing.Any/object, "
                        f"or an FFI-registered object class, got {t!r}")
    index: int = info.type_index
    return index


def _entries(callbacks: Any, api: str) -> list[tuple[Any, Callable[..., Any]]]:
    out: list[tuple[Any, Callable[..., Any]]] = []

    def add(entry: tuple[Any, Callable[..., Any]]) -> None:
        types = entry[0] if isinstance(entry[0], tuple) else (entry[0],)
        out.extend((t, entry[1]) for t in types)

    if callable(callbacks):
        out.append((typing.Any, callbacks))
    elif isinstance(callbacks, tuple) and len(callbacks) == 2 and callable(callbacks[1]):
        add(callbacks)
    elif isinstance(callbacks, Sequence) and not isinstance(callbacks, (str, bytes)):
        for c in callbacks:
            if not isinstance(c, tuple) or len(c) != 2 or not callable(c[1]):
                raise TypeError(f"{api} callbacks within a sequence must be (type, callback) tuples")
            add(c)
    else:
        raise TypeError(f"{api} callbacks must be callbacks, (type, callback) entries, "
                        "((type1, type2, ...), callback) entries, or sequences of tuple entries")
    return out


def _order(order: Any, api: str) -> int:
    if isinstance(order, WalkOrder):
        return int(order)
    if order in ("pre", "post"):
        return int(WalkOrder.PREORDER if order == "pre" else WalkOrder.POSTORDER)
    raise ValueError(f"Unknown structural {api} order: {order!r}")


def _with_kind(fn: Callable[..., Any]) -> Callable[[Any, int], Any]:
    return lambda value, kind: fn(value, DefRegionKind(kind))


def structural_walk(root: Any, callbacks: Any = (), with_def_region_kind: Any = (),
                    order: str | WalkOrder = "post") -> VisitInterrupt | None:
    """Walks ``root`` calling the first matching callback at every value but None: the
    elements of Arrays, Lists and Tuples, the values (not keys) of Maps and Dicts, the
    compared fields of reflected objects, before (``order="pre"``) or after (``"post"``,
    the default) the children. ``callbacks`` take ``(value)``; ``with_def_region_kind``
    ones ``(value, DefRegionKind)``. A callback returns None / ``WalkResult.ADVANCE``,
    ``WalkResult.SKIP`` (pre-order: leave out the children), or a :class:`VisitInterrupt`,
    which stops the walk and is returned (None when the walk completed).

    Raises what a callback raises, TypeError for a callback result of another kind,
    RuntimeError for nesting deeper than 1000 levels. Cycles end (a value met again
    inside itself is not walked into again).
    """
    entries = [(_type_index(t, "structural_walk"), fn) for t, fn in _entries(callbacks, "structural_walk")]
    kinded = [(_type_index(t, "structural_walk"), _with_kind(fn))
              for t, fn in _entries(with_def_region_kind, "structural_walk")]
    result: VisitInterrupt | None = _holding_gil("ffi.StructuralWalk")(root, entries, kinded, _order(order, "walk"))
    return result


def structural_visit(root: Any, callbacks: Any = ()) -> VisitInterrupt | None:
    """Visits ``root`` with callbacks that own the descent: each receives ``(value,
    visitor)`` and descends with ``visitor.visit(child)`` or ``visitor.default_visit(value)``
    (returning without either prunes the subtree); a value no callback matches gets the
    default descent. Returns the :class:`VisitInterrupt` that stopped it, or None.
    """
    entries = [(_type_index(t, "structural_visit"), fn) for t, fn in _entries(callbacks, "structural_visit")]
    result: VisitInterrupt | None = _holding_gil("ffi.StructuralVisit")(root, entries)
    return result


def _accepts_mode(fn: Callable[..., Any]) -> bool:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    try:
        sig.bind(None, None, InplaceMode.DISALLOW)
        return True
    except TypeError:
        try:
            sig.bind(None, None)
        except TypeError as err:
            raise TypeError("structural_mutate callback must accept (value, mutator) or "
                            "(value, mutator, inplace_mode)") from err
        return False


def structural_mutate(root: Any, callbacks: Any = ()) -> Any:
    """Rewrites ``root`` with callbacks that own the rewrite: each receives ``(value,
    mutator)`` (or ``(value, mutator, inplace_mode)``) and returns the result, descending
    with ``mutator.mutate(child)`` or ``mutator.default_mutate(value)``; an unmatched value
    gets the default rewrite. Unchanged subtrees are shared; the source is never changed.
    """
    entries = [(_type_index(t, "structural_mutate"), fn, _accepts_mode(fn))
               for t, fn in _entries(callbacks, "structural_mutate")]
    return _holding_gil("ffi.StructuralMutate")(root, entries)


def structural_map(root: Any, callbacks: Any = (), with_def_region_kind: Any = (),
                   order: str | WalkOrder = "post") -> Any:
    """Maps ``root``: ``mutate(x) = post(D(pre(x)))``, the callback running at every value
    (None included) before or after its children are mapped; it returns the value itself
    (unchanged) or a replacement. A parent is rebuilt only when a child changed, so
    unchanged subtrees (and an unchanged root) come back as the same objects; Lists and
    Dicts are copied on write. A variable whose definition changes is replaced by the new
    one at its uses too. Raises what a callback raises, RuntimeError past 1000 levels.
    """
    entries = [(_type_index(t, "structural_map"), fn) for t, fn in _entries(callbacks, "structural_map")]
    kinded = [(_type_index(t, "structural_map"), _with_kind(fn))
              for t, fn in _entries(with_def_region_kind, "structural_map")]
    return _holding_gil("ffi.StructuralMap")(root, entries, kinded, _order(order, "map"))
