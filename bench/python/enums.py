#!/usr/bin/env python3
"""Enum member lookup beside tvm_ffi, with pyperf in one run (issue 36 item 4).

The same enums defined on both (``Color``: a plain Enum of 16 members, ``Level``: an
IntEnum of 16), each case named ``<case>/<impl>`` like ``bench_ffi.py``'s:

    enum_get       Color.get("RED")            by str index             target <= 0.5x tvm_ffi
    enum_get_int   Level.get(12)               by int index             target <= 0.5x tvm_ffi
    enum_call      Color("RED")                the metaclass call       target <= 0.5x tvm_ffi
    enum_attr      cost[Color.RED]             an EnumAttrMap lookup    target <= 0.5x tvm_ffi
    enum_iter      list(Color)                 every member, in order   target <= 0.5x tvm_ffi

Implementations: ``ffikit`` (``ffikit.dataclasses.Enum``, over C's ffikit/enum.h) and
``tvm_ffi`` (tvm_ffi 0.1.15's ``tvm_ffi.dataclasses.Enum``). Times are per call, in the
thread's CPU time (bench_ffi.cpu_timer); ``report.py`` makes the tables; nothing here fails
on a timing.

    python enums.py -o run1.json [--cases enum_get,enum_attr] [any pyperf option]
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyperf  # noqa: E402

from bench_ffi import Suite  # noqa: E402  (hides torch before tvm_ffi is imported)

import ffikit  # noqa: E402
import ffikit.dataclasses  # noqa: E402
import tvm_ffi  # noqa: E402
import tvm_ffi.dataclasses  # noqa: E402

NAMES = ["RED", "GREEN", "BLUE", "CYAN", "MAGENTA", "YELLOW", "BLACK", "WHITE", "GREY", "ORANGE", "PINK", "BROWN",
         "PURPLE", "OLIVE", "NAVY", "TEAL"]


def define(dc, prefix: str):
    """Color (plain, 16 members), Level (IntEnum, 16 members) and a cost column, in module `dc`."""
    color = type(dc.Enum)("Color", (dc.Enum,), {n: dc.auto() for n in NAMES}, type_key=f"{prefix}.Color")
    level = type(dc.IntEnum)("Level", (dc.IntEnum,), {n: i * 3 for i, n in enumerate(NAMES)},
                             type_key=f"{prefix}.Level")
    cost = color.def_attr("cost", default=0)
    for i, m in enumerate(color):
        cost[m] = i
    return color, level, cost


def enums(s: Suite) -> None:
    for impl, dc in (("ffikit", ffikit.dataclasses), ("tvm_ffi", tvm_ffi.dataclasses)):
        color, level, cost = define(dc, f"bench_enum_{impl}")
        red = color.get("RED")
        assert color("RED").same_as(red) and level.get(12).same_as(level.get("MAGENTA")) and cost[red] == 0
        ns = {"Color": color, "Level": level, "cost": cost, "red": red}
        s.add("enum_get", impl, 'Color.get("RED")', ns)
        s.add("enum_get_int", impl, "Level.get(12)", ns)
        s.add("enum_call", impl, 'Color("RED")', ns)
        s.add("enum_attr", impl, "cost[red]", ns)
        s.add("enum_iter", impl, "list(Color)", ns, dup=1)


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
    enums(Suite(runner, [c for c in args.cases.split(",") if c]))


if __name__ == "__main__":
    main()
