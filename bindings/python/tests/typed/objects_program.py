"""A typed program using reflected objects as a user would; checked with mypy --strict."""
from __future__ import annotations

import copy
import pickle
import ffikit
from ffikit.testing import TestIntPair, TestObjectBase, TestObjectDerived
from typing import Any, Optional

from ffikit.dataclasses import asdict, field, py_class, replace
from ffikit.dataclasses import fields as dc_fields


@py_class("typed_program.Node", eq=True)
class Node(ffikit.Object):
    """A type defined in Python: its fields live in C."""

    value: int
    next: Optional[Node] = None
    tags: list[str] = field(default_factory=list)

    @ffikit.method
    def total(self) -> int:
        return self.value + (self.next.total() if self.next is not None else 0)


@ffikit.register_object("testing.TestUnregisteredObject")
class Unregistered(ffikit.Object):
    """Bound only in this program (the suite leaves the type without a class)."""

    __slots__ = ()
    v1: int
    v2: int


def main() -> int:
    pair = TestIntPair(1, 2)
    a: int = pair.a
    total: int = pair.sum()
    base = TestObjectBase(v_i64=3)
    base.v_i64 = 4
    added: int = base.add_i64(1)
    text: str = base.v_str
    derived = TestObjectDerived(v_map={"k": 1}, v_array=[1, 2])
    n: int = len(derived.v_array) + len(derived.v_map)
    info: ffikit.TypeInfo = TestIntPair.__tvm_ffi_type_info__  # type: ignore[attr-defined]
    fields: list[str] = [f.name for f in info.fields]
    doc: str | None = TestIntPair.a.__doc__
    made: ffikit.Object = ffikit.testing.create_object("testing.TestObjectBase", v_i64=1)
    keys: list[str] = ffikit.get_registered_type_keys()
    same: bool = copy.copy(pair).same_as(pair) or copy.deepcopy(pair).same_as(pair)
    back: TestIntPair = pickle.loads(pickle.dumps(pair))
    u = ffikit.testing.make_unregistered_object()
    assert isinstance(u, Unregistered)
    v: int = u.v1 + u.v2
    del made
    node = Node(1, Node(2), tags=["a"])
    names: list[str] = [f.name for f in dc_fields(node)]
    moved: Node = replace(node, value=5)
    as_dict: dict[str, Any] = asdict(node)
    node_total: int = node.total() + moved.value + len(names) + len(as_dict) + int(node == moved)
    return a + total + added + len(text) + n + len(fields) + len(doc or "") + len(keys) + int(same) + back.b + v + node_total


if __name__ == "__main__":
    print(main())
