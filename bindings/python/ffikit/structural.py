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

from typing import TYPE_CHECKING, Any

from . import _core

if TYPE_CHECKING:
    from .access_path import AccessPath

__all__ = ["get_first_structural_mismatch", "structural_equal", "structural_hash"]


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
