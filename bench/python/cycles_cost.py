#!/usr/bin/env python3
"""What weak references and the cycle tools cost on object creation and field writes
(issue 35 item 5): two builds of the package side by side, in one run.

    python cycles_cost.py BEFORE_DIR AFTER_DIR [--rounds 7] [--number 200000]

Each *_DIR holds an importable ``ffikit`` package (Bazel's runfiles layout or an install).
The cases run in a fresh interpreter per (round, build), the builds alternating round by
round so that drift on a busy machine falls on both alike; each prints the best of 5
``timeit`` repeats in ns per statement, and the table shows the median over rounds and
the after/before ratio. Nothing here fails on a timing.

    construct_c         ffikit.testing.TestIntPair(1, 2)   (a type defined in C)
    construct_pyclass   Node(1)                             (a py_class with an int and an object field)
    construct_string    ffikit.String(s)                    (its wrapper gained a __weakref__ slot)
    construct_list      ffikit.List(())
    write_int           b.v_i64 = 3                          (TestObjectBase, a C type)
    write_pyclass_int   n.value = 3
    write_pyclass_obj   n.next = m                           (an object field: retain new, retire old)
    dict_set_object     d[k] = 1 with an object key         (ffk_any_hash/ffk_any_equal on objects)
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, timeit
from typing import Optional
import ffikit, ffikit.testing
from ffikit import Object
from ffikit.dataclasses import py_class

@py_class("bench_cycles.Node")
class Node(Object):
    value: int = 0
    next: Optional[Object] = None

number = int(sys.argv[1])
TestIntPair, TestObjectBase, String, List = ffikit.testing.TestIntPair, ffikit.testing.TestObjectBase, ffikit.String, ffikit.List
b, n, m, s = TestObjectBase(), Node(1), Node(2), "a string longer than seven bytes"
d, k = ffikit.Dict(), ffikit.List(())
cases = {
    "construct_c": ("TestIntPair(1, 2)", {}),
    "construct_pyclass": ("Node(1)", {}),
    "construct_string": ("String(s)", {}),
    "construct_list": ("List(())", {}),
    "write_int": ("b.v_i64 = 3", {}),
    "write_pyclass_int": ("n.value = 3", {}),
    "write_pyclass_obj": ("n.next = m", {}),
    "dict_set_object": ("d[k] = 1", {}),
}
out = {}
for name, (stmt, _) in cases.items():
    t = timeit.Timer(stmt, globals=globals())
    out[name] = min(t.repeat(repeat=5, number=number)) / number * 1e9
n.next = None
print(json.dumps(out))
"""


def run(path: str, number: int) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=path, PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "-c", CHILD, str(number)], env=env, cwd="/", capture_output=True,
                       text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--number", type=int, default=200000)
    args = ap.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    for i in range(args.rounds):
        order = ("before", "after") if i % 2 == 0 else ("after", "before")
        for which in order:
            runs[which].append(run(getattr(args, which), args.number))
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(f"CPU: {cpu}; Python {sys.version.split()[0]}; {args.rounds} rounds, median of per-round best-of-5")
    print(f"{'case':20} {'before ns':>10} {'after ns':>10} {'after/before':>13}")
    for case in runs["before"][0]:
        b = statistics.median(r[case] for r in runs["before"])
        a = statistics.median(r[case] for r in runs["after"])
        print(f"{case:20} {b:10.1f} {a:10.1f} {a / b:13.3f}")


if __name__ == "__main__":
    main()
