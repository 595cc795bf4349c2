"""ffikit.debug: finding what ffikit's reference counting cannot free.

ffikit frees an object when its last reference goes; it has no cycle collector (as
TVM-FFI). Objects that hold each other through fields, ``List`` or ``Dict`` elements,
directly or around a loop, therefore stay alive after the program drops them, and
Python's :mod:`gc` cannot help: it does not see the references C objects hold. Break such
cycles with :class:`ffikit.WeakRef` (a back reference that does not keep its target
alive) or by clearing a field before dropping the value; :func:`find_cycles` checks.
"""
from __future__ import annotations

from typing import Any

from . import _core

__all__ = ["find_cycles"]


def find_cycles(value: Any, max_cycles: int = 100) -> list[list[Any]]:
    """The reference cycles reachable from ``value``: a list of cycles, each the list of
    objects on it, every one holding the next and the last holding the first (an object
    that holds itself, such as a ``List`` appended to itself, is a cycle of one).

    It follows ``Array``, ``Tuple``, ``List``, ``Map`` and ``Dict`` elements (keys and
    values) and the fields of reflected objects (``py_class``/``c_class`` instances and C
    types); not ``WeakRef`` targets, and not what Functions, Tensors, Modules or opaque
    Python values hold. It reports at least one cycle through every group of objects that
    reach each other, and returns ``[]`` exactly when there is none; at most
    ``max_cycles`` are reported. Any depth works. The result holds the objects it names:
    drop it before expecting them to go.

    Raises ValueError when ``max_cycles`` is less than 1, and TypeError when ``value``
    cannot be converted to an ffikit value.
    """
    found = _core._find_cycles(value, max_cycles)
    return [list(cycle) for cycle in found]
