"""Access paths: where a value sits inside another, as a chain of attribute, item and key
steps from a root (tvm_ffi's ``tvm_ffi.access_path``, same names and methods).

:func:`ffikit.get_first_structural_mismatch` reports its answer as two paths. A path is
an immutable C object (``ffikit.AccessPath``, ``ffikit/access_path.h``): extending one
makes a child that shares its parent. Every method here calls the type's reflected C
methods, so C, Python and Rust build, compare and print paths alike. ``str(p)`` and
``repr(p)`` are tvm_ffi's text::

    >>> AccessPath.root().attr("body").array_item(1).map_item("k")
    <root>.body[1]["k"]

Missing steps (one side lacks what the other has) print as ``[<missing:2>]``.
"""
from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, Any

from . import _core
from ._core import Object
from .registry import register_object

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["AccessKind", "AccessPath", "AccessStep"]


class AccessKind(IntEnum):
    """The kind of one step (the values of ``ffk_access_kind`` and tvm_ffi's AccessKind)."""

    ATTR = 0
    ARRAY_ITEM = 1
    MAP_ITEM = 2
    ATTR_MISSING = 3
    ARRAY_ITEM_MISSING = 4
    MAP_ITEM_MISSING = 5


@register_object("ffikit.AccessStep")
class AccessStep(Object):
    """One step of an access path: ``kind`` (an int, see :class:`AccessKind`) and ``key``
    (the attribute name, the array index or the map key). Read-only."""

    __slots__ = ()
    kind: int
    key: Any


@register_object("ffikit.AccessPath")
class AccessPath(Object):
    """A path from a root to a value inside it (read-only fields ``parent``, ``step`` and
    ``depth``; the root has no parent or step and depth 0). Made with :meth:`root` and
    the extending methods, never directly::

        p = AccessPath.root().attr("layer").attr("weight").array_item(2)

    Two paths are equal (``==``) when they have the same steps (keys compared by key
    semantics); equal paths hash alike.
    """

    __slots__ = ()
    parent: AccessPath | None
    step: AccessStep | None
    depth: int

    def __init__(self) -> None:
        """Refuses direct construction (use :meth:`root`), as tvm_ffi does."""
        raise ValueError("AccessPath can't be initialized directly. "
                         "Use AccessPath.root() to create a path to the root object")

    @staticmethod
    def root() -> AccessPath:
        """The path of the root itself (``<root>``)."""
        path: AccessPath = AccessPath._root()  # type: ignore[attr-defined]
        return path

    def attr(self, attr_key: str) -> AccessPath:
        """This path followed by the field ``attr_key`` (``.attr_key``)."""
        path: AccessPath = self._attr(attr_key)  # type: ignore[attr-defined]
        return path

    def attr_missing(self, attr_key: str) -> AccessPath:
        """This path followed by a field ``attr_key`` that this side lacks."""
        path: AccessPath = self._attr_missing(attr_key)  # type: ignore[attr-defined]
        return path

    def array_item(self, index: int) -> AccessPath:
        """This path followed by the element at ``index`` (``[index]``)."""
        path: AccessPath = self._array_item(index)  # type: ignore[attr-defined]
        return path

    def array_item_missing(self, index: int) -> AccessPath:
        """This path followed by an element at ``index`` past this side's end."""
        path: AccessPath = self._array_item_missing(index)  # type: ignore[attr-defined]
        return path

    def map_item(self, key: Any) -> AccessPath:
        """This path followed by the value of ``key`` (``[key]``, the key as repr writes it)."""
        path: AccessPath = self._map_item(key)  # type: ignore[attr-defined]
        return path

    def map_item_missing(self, key: Any) -> AccessPath:
        """This path followed by a key ``key`` that this side lacks."""
        path: AccessPath = self._map_item_missing(key)  # type: ignore[attr-defined]
        return path

    def is_prefix_of(self, other: AccessPath) -> bool:
        """Whether this path's steps begin ``other``'s (a path is a prefix of itself)."""
        result: bool = self._is_prefix_of(other)  # type: ignore[attr-defined]
        return result

    def to_steps(self) -> Sequence[AccessStep]:
        """The steps from the root, root first (an Array of :class:`AccessStep`)."""
        steps: Sequence[AccessStep] = self._to_steps()  # type: ignore[attr-defined]
        return steps

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AccessPath):
            return False
        result: bool = self._path_equal(other)  # type: ignore[attr-defined]
        return result

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        # Consistent with __eq__ (tvm_ffi hashes paths by identity, so two equal paths
        # could land in different dict buckets): the structural hash of the steps.
        h: int = _core._structural_hash(self)
        return h & 0x7FFFFFFFFFFFFFFF

