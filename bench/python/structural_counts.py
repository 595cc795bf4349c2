#!/usr/bin/env python3
"""The driver of the instruction counts in README.md ("Second round (branch walk)"): builds
the trees of ``structural.py`` for one library, calls one case once, then K more times.

    python structural_counts.py LIB CASE K      LIB: ffikit | tvm_ffi;  CASE: s_walk | s_walk_any |
                                                s_equal | s_equal_fv | s_hash

Run it under ``valgrind --tool=callgrind`` with K = 0 and K = 6 (``PYTHONHASHSEED=0``); the
difference of the two totals over 6 x 10,000 is the cost of one call per node, Python
included, the same way for both libraries (leave out other threads' functions, such as
numpy's OpenBLAS server, which spins in some runs).
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import structural as S  # noqa: E402


def main() -> None:
    lib_name, case, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if lib_name == "tvm_ffi":
        import tvm_ffi as lib
        var, vnode, node = S.TvmVar, S.TvmVNode, S.TvmNode
    else:
        import ffikit as lib
        (var, vnode, _), _ = S.ffikit_var_classes()
        node, _ = S.ffikit_node_class()
    if case == "s_equal_fv":
        a, b = S.var_tree(var, vnode, lib.Array), S.var_tree(var, vnode, lib.Array)
        for _ in range(k + 1):
            assert lib.structural_equal(a, b, map_free_vars=True)
    elif case == "s_equal":
        a, b = (S.build_tree(lambda i, kids: node(i, f"n{i}", lib.Array(kids))) for _ in range(2))
        for _ in range(k + 1):
            assert lib.structural_equal(a, b)
    elif case == "s_hash":
        a = S.build_tree(lambda i, kids: node(i, f"n{i}", lib.Array(kids)))
        for _ in range(k + 1):
            lib.structural_hash(a)
    elif case in ("s_walk", "s_walk_any"):
        tree = S.build_tree(lambda i, kids: node(i, f"n{i}", lib.Array(kids)))

        def nop(v):
            return None

        entry = (node, nop) if case == "s_walk" else nop
        for _ in range(k + 1):
            lib.structural_walk(tree, entry)
    else:
        raise SystemExit(f"unknown case {case!r}")


if __name__ == "__main__":
    main()
