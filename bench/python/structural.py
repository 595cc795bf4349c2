#!/usr/bin/env python3
"""Structural tools and the JSON graph format beside tvm_ffi, with pyperf in one run.

Issue 24's "Performance" cases, each named ``<case>/<impl>`` like ``bench_ffi.py``'s, over
trees of 10,000 reflected nodes (a complete 4-ary tree, built bottom-up): every node holds an
int, a str and an Array of its children.

    s_equal    structural_equal(a, b)     two equal, separately built trees   target <= 0.5x tvm_ffi
    s_hash     structural_hash(a)                                             target <= 0.5x tvm_ffi
    to_json    to_json_graph_str(a)                                           target <= 0.5x tvm_ffi
    from_json  from_json_graph_str(doc)   the document each side wrote        target <= 0.5x tvm_ffi

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

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyperf  # noqa: E402

from bench_ffi import Suite  # noqa: E402  (hides torch before tvm_ffi is imported)

import ffikit  # noqa: E402
import ffikit.testing  # noqa: E402
import tvm_ffi  # noqa: E402
from tvm_ffi.dataclasses import py_class as tvm_py_class  # noqa: E402

NODES = 10_000
FAN = 4


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
    structural(Suite(runner, [c for c in args.cases.split(",") if c]))


if __name__ == "__main__":
    main()
