#!/usr/bin/env python3
"""Structural tools and the JSON graph format beside tvm_ffi, with pyperf in one run.

Issue 24's "Performance" cases, each named ``<case>/<impl>`` like ``bench_ffi.py``'s, over
trees of 10,000 reflected nodes (a complete 4-ary tree, built bottom-up): every node holds an
int, a str and an Array of its children.

    s_equal    structural_equal(a, b)     two equal, separately built trees   target <= 0.5x tvm_ffi
    s_hash     structural_hash(a)                                             target <= 0.5x tvm_ffi
    to_json    to_json_graph_str(a)                                           target <= 0.5x tvm_ffi
    from_json  from_json_graph_str(doc)   the document each side wrote        target <= 0.5x tvm_ffi

Issue 36's cases, over the same tree shape (impls ``ffikit`` and ``tvm_ffi`` only):

    s_equal_fv  structural_equal(a, b, map_free_vars=True)   two trees whose nodes also hold one
                of 100 free variables each (``py_class(structural_eq="var")``, node i the
                variable i % 100) in a field typed as the variable class, each tree its own
                variables                                           target <= 0.5x tvm_ffi
    s_equal_fv_any  the same with the variable in a field typed ``Any`` (informational: a
                writable Any field is two words, read under a lock and retained)
    s_walk      structural_walk(a, (Node, f))   post-order, a no-op Python callback on the
                10,000 nodes (the ints, strs and Arrays are walked, matched, not called)
                                                                    target <= 0.5x tvm_ffi
    s_walk_any  structural_walk(a, f)   the same with a catch-all callback: called at all
                40,000 values (nodes, ints, strs, Arrays)           (informational)

Implementations: ``ffikit`` (a ``ffikit.dataclasses.py_class`` node: ``value: int``,
``name: str``, ``children: Array``), ``tvm_ffi`` (the same class with tvm_ffi 0.1.15's
``@py_class(structural_eq="tree")``) and ``ffikit_c`` (informational: ffikit's C-defined
``testing.TestObjectDerived`` as the node, ``v_i64``/``v_str``/``v_array`` holding the
same values, plus its two other fields at their defaults: ``v_f64`` and an empty
``v_map``). Times are per call, in the thread's CPU time (bench_ffi.cpu_timer);
``report.py`` makes the tables; nothing here fails on a timing.

    python structural.py -o run1.json [--cases s_equal,to_json] [any pyperf option]
"""
from __future__ import annotations

import functools
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyperf  # noqa: E402

from bench_ffi import Suite  # noqa: E402  (hides torch before tvm_ffi is imported)

import ffikit  # noqa: E402
import ffikit.testing  # noqa: E402
import tvm_ffi  # noqa: E402
from tvm_ffi.dataclasses import field as tvm_field  # noqa: E402
from tvm_ffi.dataclasses import py_class as tvm_py_class  # noqa: E402

NODES = 10_000
FAN = 4
VARS = 100


def build_tree(make, n: int = NODES, fan: int = FAN):
    """The root of a complete `fan`-ary tree of `n` nodes, node i = make(i, children)."""
    built: list = [None] * n
    for i in reversed(range(n)):
        built[i] = make(i, [built[c] for c in range(fan * i + 1, min(fan * i + fan + 1, n))])
    return built[0]


@tvm_py_class("bench.TvmNode", structural_eq="tree")
class TvmNode(tvm_ffi.Object):
    value: int
    name: str
    children: tvm_ffi.Array


@tvm_py_class("bench.TvmVar", structural_eq="var")
class TvmVar(tvm_ffi.Object):
    name: str = tvm_field(structural_eq="ignore")


@tvm_py_class("bench.TvmVNode", structural_eq="tree")
class TvmVNode(tvm_ffi.Object):
    value: int
    name: str
    var: TvmVar
    children: tvm_ffi.Array


@tvm_py_class("bench.TvmVNodeAny", structural_eq="tree")
class TvmVNodeAny(tvm_ffi.Object):
    value: int
    name: str
    var: Any
    children: tvm_ffi.Array


@functools.cache
def ffikit_var_classes():
    """The py_class variable and node of the free-variable tree, or (None, reason)."""
    try:
        from ffikit.dataclasses import field, py_class
    except ImportError as e:
        return None, f"ffikit.dataclasses is not available ({e})"

    @py_class("bench.FfkVar", structural_eq="var")
    class FfkVar(ffikit.Object):
        name: str = field(structural_eq="ignore")

    @py_class("bench.FfkVNode")
    class FfkVNode(ffikit.Object):
        value: int
        name: str
        var: FfkVar
        children: ffikit.Array

    @py_class("bench.FfkVNodeAny")
    class FfkVNodeAny(ffikit.Object):
        value: int
        name: str
        var: Any
        children: ffikit.Array

    return (FfkVar, FfkVNode, FfkVNodeAny), None


def var_tree(var, node, array):
    """A tree of `node`s with VARS fresh variables of class `var`, node i holding variable i % VARS."""
    vs = [var(f"v{k}") for k in range(VARS)]
    return build_tree(lambda i, kids: node(i, f"n{i}", vs[i % VARS], array(kids)))


@functools.cache
def ffikit_node_class():
    """The py_class node, or the reason it cannot be made here."""
    try:
        from ffikit.dataclasses import py_class
    except ImportError as e:
        return None, f"ffikit.dataclasses is not available ({e})"

    @py_class("bench.FfkNode")
    class FfkNode(ffikit.Object):
        value: int
        name: str
        children: ffikit.Array

    return FfkNode, None


def sides() -> dict:
    """impl -> (make(i, kids), the library's functions), or impl -> reason to skip."""
    out: dict = {
        "tvm_ffi": (lambda i, kids: TvmNode(i, f"n{i}", tvm_ffi.Array(kids)), tvm_ffi.structural_equal,
                    tvm_ffi.structural_hash, tvm_ffi.serialization.to_json_graph_str,
                    tvm_ffi.serialization.from_json_graph_str),
    }
    funcs = (ffikit.structural_equal, ffikit.structural_hash, ffikit.serialization.to_json_graph_str,
             ffikit.serialization.from_json_graph_str)
    node, reason = ffikit_node_class()
    out["ffikit"] = ((lambda i, kids: node(i, f"n{i}", ffikit.Array(kids))), *funcs) if node else reason
    derived = ffikit.testing.TestObjectDerived
    empty = ffikit.Map({})
    out["ffikit_c"] = (lambda i, kids: derived(v_i64=i, v_str=f"n{i}", v_map=empty, v_array=ffikit.Array(kids)),
                       *funcs)
    return out


def structural(s: Suite) -> None:
    for impl, side in sides().items():
        if isinstance(side, str):
            for case in ("s_equal", "s_hash", "to_json", "from_json"):
                s.add(case, impl, "", {}, needs=side)
            continue
        make, equal, hash_, to_json, from_json = side
        a, b = build_tree(make), build_tree(make)
        doc = to_json(a)
        assert equal(a, b) and equal(from_json(doc), a), f"{impl}: the trees differ"
        ns = {"equal": equal, "hash_": hash_, "to_json": to_json, "from_json": from_json, "a": a, "b": b, "doc": doc}
        s.add("s_equal", impl, "equal(a, b)", ns, dup=1)
        s.add("s_hash", impl, "hash_(a)", ns, dup=1)
        s.add("to_json", impl, "to_json(a)", ns, dup=1)
        s.add("from_json", impl, "from_json(doc)", ns, dup=1)


def free_vars_and_walks(s: Suite) -> None:
    classes, reason = ffikit_var_classes()
    node_class, node_reason = ffikit_node_class()
    libs: dict = {"tvm_ffi": (tvm_ffi, (TvmVar, TvmVNode, TvmVNodeAny), TvmNode)}
    libs["ffikit"] = (ffikit, classes, node_class) if classes and node_class else (reason or node_reason)
    for impl, side in libs.items():
        if isinstance(side, str):
            for case in ("s_equal_fv", "s_equal_fv_any", "s_walk", "s_walk_any"):
                s.add(case, impl, "", {}, needs=side)
            continue
        lib, (var, vnode, vnode_any), node = side
        a, b = var_tree(var, vnode, lib.Array), var_tree(var, vnode, lib.Array)
        a_any, b_any = var_tree(var, vnode_any, lib.Array), var_tree(var, vnode_any, lib.Array)
        for x, y in ((a, b), (a_any, b_any)):
            assert lib.structural_equal(x, y, map_free_vars=True) and not lib.structural_equal(x, y), f"{impl}: free vars"
        tree = build_tree(lambda i, kids: node(i, f"n{i}", lib.Array(kids)))
        calls = [0]

        def on_node(n, calls=calls):
            calls[0] += 1

        def nop(v):
            return None

        lib.structural_walk(tree, (node, on_node))
        assert calls[0] == NODES, f"{impl}: the walk called back {calls[0]} times"
        ns = {"equal": lib.structural_equal, "walk": lib.structural_walk, "a": a, "b": b, "a_any": a_any,
              "b_any": b_any, "tree": tree, "entry": (node, nop), "nop": nop}
        s.add("s_equal_fv", impl, "equal(a, b, map_free_vars=True)", ns, dup=1)
        s.add("s_equal_fv_any", impl, "equal(a_any, b_any, map_free_vars=True)", ns, dup=1)
        s.add("s_walk", impl, "walk(tree, entry)", ns, dup=1)
        s.add("s_walk_any", impl, "walk(tree, nop)", ns, dup=1)


def main() -> None:
    def forward(cmd: list[str], args) -> None:
        if args.cases:
            cmd.extend(("--cases", args.cases))

    runner = pyperf.Runner(processes=2, values=3, min_time=0.05, add_cmdline_args=forward)
    runner.argparser.add_argument("--cases", default="",
                                  help="comma-separated case-name prefixes to run (default: all)")
    args = runner.parse_args()
    runner.metadata["ffikit_version"] = ffikit.__version__
    runner.metadata["tvm_ffi_version"] = tvm_ffi.__version__
    suite = Suite(runner, [c for c in args.cases.split(",") if c])
    structural(suite)
    free_vars_and_walks(suite)


if __name__ == "__main__":
    main()
