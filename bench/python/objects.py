#!/usr/bin/env python3
"""Reflected objects from Python beside tvm_ffi and plain Python classes, with pyperf in one run.

The cases of issue 23's "Tests and measurements", each named ``<case>/<impl>`` like
``bench_ffi.py``'s: ``ffikit`` (``ffikit.testing.TestIntPair``, a type defined in C with
two read-only int fields ``a``, ``b`` and a method ``sum``) beside ``tvm_ffi`` (its
``tvm_ffi.testing.TestIntPair``, the same shape) and ``slots`` (a Python class with
``__slots__ = ("a", "b")`` and a Python ``sum``):

    field_read   p.a                 targets: <= 0.5x tvm_ffi, <= 2x slots
    construct    TestIntPair(1, 2)   target:  <= 0.5x tvm_ffi (slots: informational)
    method       p.sum()             target:  <= 0.5x tvm_ffi (slots: informational)
    method_gil   p.sum() with ffikit releasing the GIL around the C call as tvm_ffi does
                 (TestIntPair.sum.release_gil = True; off by default): informational
    field_write  b.v_i64 = 3         informational (TestObjectBase; tvm_ffi's is a C++ setter)
    pyclass_read         p.x on a py_class with a writable int field ``x`` (ffikit.dataclasses
                         beside tvm_ffi.dataclasses), and ``slots`` a class with __slots__ = ("x",):
                         target <= 2x slots (issue 24)
    pyclass_read_frozen  the same with a frozen py_class (read-only field): informational
    pyclass_write        p.x = 3 on the writable py_class: informational (ffikit writes C,
                         then its field write hook reloads the cached slot)

Times are per statement, in the thread's CPU time (bench_ffi.cpu_timer). ``report.py``
turns the JSON output into the table of medians and ratios; nothing here fails on a
timing.

    python objects.py -o run1.json [--cases field_read,method] [any pyperf option]

tvm_ffi.testing imports pytest (install it beside apache-tvm-ffi); torch stays hidden as
in bench_ffi.py.
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
import tvm_ffi.testing  # noqa: E402


class SlotsPair:
    """The Python baseline: two attributes in slots and a method."""

    __slots__ = ("a", "b")

    def __init__(self, a: int, b: int) -> None:
        self.a = a
        self.b = b

    def sum(self) -> int:
        return self.a + self.b


class SlotsBase:
    __slots__ = ("v_i64",)

    def __init__(self) -> None:
        self.v_i64 = 10


class SlotsPoint:
    __slots__ = ("x",)

    def __init__(self, x: int) -> None:
        self.x = x


def pyclass_sides() -> dict[str, tuple[type, type]]:
    """(writable, frozen) classes with one int field ``x``, per implementation."""
    from ffikit.dataclasses import py_class as ffk_py_class
    from tvm_ffi.dataclasses import py_class as tvm_py_class

    @ffk_py_class("bench.PyPoint")
    class FfkPoint(ffikit.Object):
        x: int

    @ffk_py_class("bench.PyFrozenPoint", frozen=True)
    class FfkFrozenPoint(ffikit.Object):
        x: int

    @tvm_py_class("bench.PyPoint")
    class TvmPoint(tvm_ffi.Object):
        x: int

    @tvm_py_class("bench.PyFrozenPoint", frozen=True)
    class TvmFrozenPoint(tvm_ffi.Object):
        x: int

    return {"ffikit": (FfkPoint, FfkFrozenPoint), "tvm_ffi": (TvmPoint, TvmFrozenPoint),
            "slots": (SlotsPoint, SlotsPoint)}


def objects(s: Suite) -> None:
    sides = {
        "ffikit": (ffikit.testing.TestIntPair, ffikit.testing.TestObjectBase),
        "tvm_ffi": (tvm_ffi.testing.TestIntPair, tvm_ffi.testing.TestObjectBase),
        "slots": (SlotsPair, SlotsBase),
    }
    for impl, (pair_cls, base_cls) in sides.items():
        ns = {"Pair": pair_cls, "p": pair_cls(1, 2), "b": base_cls()}
        s.add("field_read", impl, "p.a", ns)
        s.add("construct", impl, "Pair(1, 2)", ns)
        s.add("method", impl, "p.sum()", ns)
        s.add("field_write", impl, "b.v_i64 = 3", ns)
    # The same method through a descriptor of its own that releases the GIL (the class's
    # keeps it), beside tvm_ffi's p.sum(), which releases it too.
    (sum_gil,) = [m for m in ffikit.testing.TestIntPair.__tvm_ffi_type_info__.methods if m.name == "sum"]
    sum_gil.release_gil = True
    s.add("method_gil", "ffikit", "sum_gil(p)", {"sum_gil": sum_gil, "p": ffikit.testing.TestIntPair(1, 2)})
    s.add("method_gil", "tvm_ffi", "p.sum()", {"p": tvm_ffi.testing.TestIntPair(1, 2)})
    for impl, (point_cls, frozen_cls) in pyclass_sides().items():
        s.add("pyclass_read", impl, "p.x", {"p": point_cls(1)})
        s.add("pyclass_read_frozen", impl, "p.x", {"p": frozen_cls(1)})
        s.add("pyclass_write", impl, "p.x = 3", {"p": point_cls(1)})


def main() -> None:
    def forward(cmd: list[str], args) -> None:
        if args.cases:
            cmd.extend(("--cases", args.cases))

    runner = pyperf.Runner(processes=2, values=3, min_time=0.02, add_cmdline_args=forward)
    runner.argparser.add_argument("--cases", default="",
                                  help="comma-separated case-name prefixes to run (default: all)")
    args = runner.parse_args()
    runner.metadata["ffikit_version"] = ffikit.__version__
    runner.metadata["tvm_ffi_version"] = tvm_ffi.__version__
    objects(Suite(runner, [c for c in args.cases.split(",") if c]))


if __name__ == "__main__":
    main()
