#!/usr/bin/env python3
"""Ratios ffikit/peer over several runs of one benchmark binary, with their spread.

On a shared machine one run of a binary says little: load moves every number, and it
moves the two sides of a pair alike only within one run. So each run's ratios are taken
as bench/ratios.py takes them (median CPU time per item of the repetitions, ffikit over
each peer of its group, from the same process), and this prints, per pair, the median of
those ratios over the runs with their range:

    python3 bench/spread.py run1.json run2.json run3.json [--peers tvm_ffi,tvm_ffi_cxx,pydict]

Columns: group, peer, ffikit ns (median over runs [min-max]), peer ns (same), ratio
(median [min-max]), runs. --peers keeps only the named peers. Standard library only.
"""

import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ratios  # noqa: E402  (bench/ratios.py: collect, fmt_ns, fmt_ratio)


def spread(values, fmt):
    values = sorted(values)
    if len(values) == 1:
        return fmt(values[0])
    return "%s [%s-%s]" % (fmt(statistics.median(values)), fmt(values[0]), fmt(values[-1]))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", nargs="+", help="Google Benchmark JSON files, one per run")
    parser.add_argument("--peers", default="", help="only these peers (comma-separated)")
    args = parser.parse_args(argv)
    wanted = {p for p in args.peers.split(",") if p}
    runs = []
    for path in args.json:
        with open(path, encoding="utf-8") as f:
            runs.append(ratios.collect(json.load(f)))
    pairs = []  # (group, peer) in first-seen order
    for times in runs:
        for group, impl in times:
            if impl != ratios.FFIKIT and (not wanted or impl in wanted) and (group, impl) not in pairs:
                pairs.append((group, impl))
    print("| group | peer | ffikit ns | peer ns | ffikit/peer | runs |")
    print("|---|---|---:|---:|---:|---:|")
    for group, peer in pairs:
        ours, theirs, ratio = [], [], []
        for times in runs:
            a, b = times.get((group, ratios.FFIKIT)), times.get((group, peer))
            if a is None or b is None or b <= 0:
                continue
            ours.append(a)
            theirs.append(b)
            ratio.append(a / b)
        if not ratio:
            continue
        print("| %s | %s | %s | %s | %s | %d |" % (group, peer, spread(ours, ratios.fmt_ns), spread(theirs, ratios.fmt_ns),
                                                 spread(ratio, ratios.fmt_ratio), len(ratio)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
