"""A typed program using the structural tools, access paths and the JSON graph format as a
user would; checked with mypy --strict."""
from __future__ import annotations

import copy
import pickle

import ffikit
from ffikit.access_path import AccessKind, AccessPath, AccessStep
from ffikit.serialization import from_json_graph_str, from_json_graph_str_with_metadata, to_json_graph_str
from ffikit.structural import get_first_structural_mismatch, structural_equal, structural_hash
from ffikit.testing import TestIntPair


def main() -> int:
    a = ffikit.Array([1, TestIntPair(1, 2)])
    b = ffikit.Array([1, TestIntPair(1, 3)])
    same: bool = structural_equal(a, b) or ffikit.structural_equal(a, b, map_free_vars=False)
    h: int = structural_hash(a) ^ ffikit.structural_hash(b, skip_tensor_content=True)
    mismatch = get_first_structural_mismatch(a, b)
    text = ""
    if mismatch is not None:
        lhs, rhs = mismatch
        text = str(lhs) + repr(rhs)
        depth: int = lhs.depth
        parent: AccessPath | None = lhs.parent
        step: AccessStep | None = lhs.step
        kinds: list[int] = [s.kind for s in lhs.to_steps()]
        prefix: bool = AccessPath.root().is_prefix_of(lhs) and lhs == rhs
        text += f"{depth}{parent}{step}{kinds}{prefix}"
    path = AccessPath.root().attr("body").array_item(1).map_item("k").attr_missing("x")
    path = path.array_item_missing(2).map_item_missing(None)
    kind: AccessKind = AccessKind.MAP_ITEM
    doc: str = to_json_graph_str(a, metadata={"version": 1})
    back = from_json_graph_str(doc)
    value, meta = from_json_graph_str_with_metadata(doc)
    pair = TestIntPair(1, 2)
    copied: TestIntPair = copy.deepcopy(pair)
    shallow: TestIntPair = copy.copy(pair)
    pickled: TestIntPair = pickle.loads(pickle.dumps(pair))
    return (int(same) + h % 7 + len(text) + len(str(path)) + int(kind) + len(doc) + len(back) + len(value)
            + int(meta is None) + copied.a + shallow.b + pickled.a)


if __name__ == "__main__":
    print(main())
