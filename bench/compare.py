#!/usr/bin/env python3
"""New/old time ratios per benchmark row, from runs of two builds that took turns.

    python3 bench/compare.py --old old.1.json old.2.json ... --new new.1.json new.2.json ...

The k-th old file and the k-th new file are one run of each build, made one after the other
(bench/compare.sh alternates them), so a change of load hits both alike. Files are Google
Benchmark JSON (bench/installed, the container benchmarks) or pyperf JSON (bench/python),
told apart by their content. Rows are "<group>/<impl>" as bench/ratios.py pairs them; a row
present in only one build is listed as such.

For every row: the old and new times (median over the runs), and the new/old ratio as the
median of the per-run ratios with its range. The peers' rows (TVM-FFI, nanobind, the
builtins, std containers: every impl but ffikit) are the same code in both builds, so their
ratios measure the noise of this run: `noise` is the largest distance from 1 of a peer row's
median ratio (at least 2%). An ffikit row is marked SLOWER when its median ratio exceeds
1 + noise and every run's ratio exceeds 1, FASTER when the mirror holds, else "~". Timings
never fail anything: the exit status is 0 unless a file cannot be read.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ratios  # noqa: E402  (bench/ratios.py: collect, split_name)


def load_times(path: str) -> dict[str, float]:
    """{"group/impl": ns} of one run file: Google Benchmark's median aggregate, or pyperf's median."""
    with open(path) as f:
        data = json.load(f)
    if "context" in data:  # Google Benchmark
        return {"%s/%s" % key: ns for key, ns in ratios.collect(data).items()}
    # pyperf: {"benchmarks": [{"metadata": {"name": ...}, "runs": [{"values": [...]}, ...]}], "metadata": {...}}
    times = {}
    for bench in data.get("benchmarks", []):
        name = bench.get("metadata", {}).get("name") or data.get("metadata", {}).get("name")
        values = [v for run in bench.get("runs", []) for v in run.get("values", [])]
        if name and values:
            times[name] = statistics.median(values) * 1e9
    return times


def merge(paths: list[str]) -> list[dict[str, float]]:
    """One {row: ns} per file (a file is one run), in the order given."""
    return [load_times(p) for p in paths]


def fmt_ns(ns: float) -> str:
    if ns >= 1e7:
        return "%.1f ms" % (ns / 1e6)
    if ns >= 1e4:
        return "%.1f us" % (ns / 1e3)
    return "%.1f" % ns if ns < 100 else "%.0f" % ns


def spread(values: list[float]) -> str:
    v = sorted(values)
    if len(v) == 1:
        return "%.3f" % v[0]
    return "%.3f [%.3f-%.3f]" % (statistics.median(v), v[0], v[-1])


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", nargs="+", required=True, help="the old build's run files, in run order")
    ap.add_argument("--new", nargs="+", required=True, help="the new build's run files, in the same order")
    ap.add_argument("--title", default="", help="a heading for the table")
    args = ap.parse_args(argv)
    old, new = merge(args.old), merge(args.new)
    if len(old) != len(new):
        print("compare.py: %d old runs but %d new ones" % (len(old), len(new)), file=sys.stderr)
        return 2
    rows = []
    for name in dict.fromkeys([n for run in old + new for n in run]):
        pairs = [(o[name], n[name]) for o, n in zip(old, new) if name in o and name in n and o[name] > 0]
        rows.append((name, pairs, any(name in o for o in old)))
    peers = [statistics.median(n / o for o, n in pairs) for name, pairs, _ in rows
             if pairs and ratios.split_name(name)[1] != "ffikit"]
    noise = max([0.02] + [abs(r - 1.0) for r in peers])
    if args.title:
        print("### " + args.title)
        print()
    print("noise (largest peer drift from 1.0 over %d peer rows, at least 2%%): %.1f%%" % (len(peers), noise * 100))
    print()
    print("| row | old ns | new ns | new/old (median [min-max]) | runs | |")
    print("|---|---:|---:|---:|---:|---|")
    slower = 0
    for name, pairs, in_old in rows:
        if not pairs:
            print("| %s | | | | 0 | only in the %s build |" % (name, "old" if in_old else "new"))
            continue
        rs = [n / o for o, n in pairs]
        med = statistics.median(rs)
        mark = "~"
        if ratios.split_name(name)[1] == "ffikit" or "/" not in name:
            if med > 1 + noise and min(rs) > 1:
                mark, slower = "**SLOWER**", slower + 1
            elif med < 1 - noise and max(rs) < 1:
                mark = "faster"
        else:
            mark = "peer"
        print("| %s | %s | %s | %s | %d | %s |" % (name, fmt_ns(statistics.median(o for o, _ in pairs)),
                                                 fmt_ns(statistics.median(n for _, n in pairs)), spread(rs), len(rs), mark))
    print()
    print("%d row(s) slower than the noise" % slower)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
