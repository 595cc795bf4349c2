#!/usr/bin/env python3
"""Pairs ffikit benchmarks with their peers and prints a markdown table of ratios.

Reads Google Benchmark JSON (a file path, or stdin when the path is omitted or "-").
Benchmarks are named "<group>/<impl>": "<group>/ffikit" is ffikit, every other impl in the
same group is a peer. Each row compares ffikit with one peer using CPU time in ns, per item
when the benchmark counts items (SetItemsProcessed: 1e9 / items_per_second), else per
iteration, taken from the "median" aggregate when the run used repetitions (otherwise the
single run; the median of the runs when there are several iterations but no median aggregate).

    python3 bench/ratios.py out.json --targets retain_release=1.0,hash_64=1.2

A target names a group (every peer of it) or one "group/peer" pair, which wins over the group's:
--targets push_1m_array/vector=1.3,push_1m_array/pylist=1.0.

--targets adds a "target" column (the largest acceptable ffikit/peer ratio) and a "status"
column, "ok" or "MISSED". The targets are informational: a MISSED target never changes the
exit status (0; only unreadable input is an error).

Two kinds of target in ns go in the same columns, named the same way (group or group/peer):
--ns-targets group=max_ns is the largest acceptable ffikit time itself ("50 ns"), and
--extra-ns-targets group/peer=max_ns the largest acceptable ffikit time minus the peer's
("peer +3.00 ns"); either adds a "ffikit-peer ns" column. A row with several targets is "ok"
only when it meets all of them:

    python3 bench/ratios.py out.json --extra-ns-targets call_2/fnptr=3 --ns-targets registry_get=50

Benchmarks run at several thread counts ("<group>/<impl>/threads:N", from ->Threads(N)) are
kept out of the pair table: a second table gives, for each such group and impl, the
items_per_second at every thread count and its ratio to the 1-thread run (the throughput
scaling; run them with ->UseRealTime() so that items_per_second is per wall-clock second).
--scaling-targets group=min_ratio adds the smallest acceptable ratio at the highest thread
count (informational too; "group/impl=min_ratio" sets it for one impl, as for --targets):

    python3 bench/ratios.py out.json --scaling-targets map_get_shared=1.8

--gbps adds a third table: the median bytes_per_second (SetBytesProcessed) of every benchmark
that reports it, in GB/s (1e9 bytes per second), with the bytes the benchmark counts per second
of CPU time:

    python3 bench/ratios.py out.json --gbps
Standard library only.
"""

import argparse
import json
import statistics
import sys

FFIKIT = "ffikit"
UNIT_TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
# Name components Google Benchmark appends on its own; they are not part of the impl name.
AUTO_SUFFIXES = ("repeats:", "threads:", "min_time:", "iterations:", "real_time",
                 "process_time", "manual_time", "min_warmup_time:")


def parse_targets(text):
    targets = {}
    if not text:
        return targets
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        group, sep, value = item.partition("=")
        if not sep:
            raise SystemExit("ratios.py: bad --targets item %r (want group=max_ratio)" % item)
        try:
            targets[group.strip()] = float(value)
        except ValueError:
            raise SystemExit("ratios.py: bad ratio in --targets item %r" % item)
    return targets


def lookup(targets, group, peer):
    """The target for one group/peer pair: the pair's own, else the group's, else None."""
    return targets.get(group + "/" + peer, targets.get(group))


def split_name(run_name):
    """'hash_8/ffikit/repeats:5' -> ('hash_8', 'ffikit'); a name without '/' has no impl."""
    parts = run_name.split("/")
    group = parts[0]
    rest = [p for p in parts[1:] if not p.startswith(AUTO_SUFFIXES)]
    return group, "/".join(rest)


def thread_count(run_name):
    """The N of a 'threads:N' name component, or None when the benchmark set no thread count."""
    for part in run_name.split("/")[1:]:
        if part.startswith("threads:"):
            try:
                return int(part[len("threads:"):])
            except ValueError:
                return None
    return None


def cpu_ns(entry):
    """CPU ns per item when the benchmark counts items, else per iteration."""
    rate = entry.get("items_per_second")
    if rate:
        return 1e9 / float(rate)
    unit = entry.get("time_unit", "ns")
    if unit not in UNIT_TO_NS:
        raise SystemExit("ratios.py: unknown time_unit %r in %s" % (unit, entry.get("name")))
    return float(entry["cpu_time"]) * UNIT_TO_NS[unit]


def collect(data):
    """{(group, impl): cpu ns} in the order the benchmarks ran, preferring the median aggregate."""
    order = []
    medians = {}
    iterations = {}
    for entry in data.get("benchmarks", []):
        if entry.get("error_occurred"):
            continue
        run_name = entry.get("run_name", entry.get("name", ""))
        if thread_count(run_name) is not None:
            continue  # see collect_scaling
        key = split_name(run_name)
        if not key[1]:
            continue
        if key not in order:
            order.append(key)
        run_type = entry.get("run_type", "iteration")
        if run_type == "aggregate":
            if entry.get("aggregate_name") == "median":
                medians[key] = cpu_ns(entry)
        else:
            iterations.setdefault(key, []).append(cpu_ns(entry))
    times = {}
    for key in order:
        if key in medians:
            times[key] = medians[key]
        elif key in iterations:
            times[key] = statistics.median(iterations[key])
    return times


def collect_scaling(data):
    """{(group, impl): {threads: items_per_second}} for the runs named with 'threads:N'."""
    medians = {}
    iterations = {}
    order = []
    for entry in data.get("benchmarks", []):
        if entry.get("error_occurred"):
            continue
        run_name = entry.get("run_name", entry.get("name", ""))
        threads = thread_count(run_name)
        if threads is None or "items_per_second" not in entry:
            continue
        key = split_name(run_name)
        if not key[1]:
            continue
        if key not in order:
            order.append(key)
        rate = float(entry["items_per_second"])
        if entry.get("run_type", "iteration") == "aggregate":
            if entry.get("aggregate_name") == "median":
                medians.setdefault(key, {})[threads] = rate
        else:
            iterations.setdefault(key, {}).setdefault(threads, []).append(rate)
    rates = {}
    for key in order:
        rates[key] = dict(medians.get(key, {}))
        for threads, runs in iterations.get(key, {}).items():
            rates[key].setdefault(threads, statistics.median(runs))
    return rates


def collect_bytes(data):
    """{run name: bytes per second} for the benchmarks that report it, preferring the median."""
    medians = {}
    runs = {}
    order = []
    for entry in data.get("benchmarks", []):
        if entry.get("error_occurred") or "bytes_per_second" not in entry:
            continue
        run_name = entry.get("run_name", entry.get("name", ""))
        if run_name not in order:
            order.append(run_name)
        rate = float(entry["bytes_per_second"])
        if entry.get("run_type", "iteration") == "aggregate":
            if entry.get("aggregate_name") == "median":
                medians[run_name] = rate
        else:
            runs.setdefault(run_name, []).append(rate)
    return {name: medians[name] if name in medians else statistics.median(runs[name])
            for name in order if name in medians or name in runs}


def print_bytes(rates):
    print("| benchmark | GB/s |")
    print("|---|---:|")
    for name, rate in rates.items():
        print("| %s | %.2f |" % (name, rate / 1e9))


def fmt_rate(rate):
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if rate >= scale:
            return "%.1f%s" % (rate / scale, suffix)
    return "%.0f" % rate


def print_scaling(rates, targets):
    header = ["group", "impl", "threads", "items/s", "vs 1 thread"]
    if targets:
        header += ["target", "status"]
    rows = []
    for (group, impl), by_threads in rates.items():
        base = by_threads.get(1)
        top = max(by_threads)
        for threads in sorted(by_threads):
            rate = by_threads[threads]
            ratio = "%.2f" % (rate / base) if base else "n/a"
            row = [group, impl, str(threads), fmt_rate(rate), ratio]
            if targets:
                target = lookup(targets, group, impl)
                if target is not None and threads == top and threads != 1 and base:
                    ok = rate / base >= target
                    row += [">= %.2f" % target, "ok" if ok else "MISSED"]
                else:
                    row += ["", ""]
            rows.append(row)
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(["---", "---", "---:", "---:", "---:"] + (["---:", "---"] if targets else [])) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def fmt_ns(ns):
    if ns >= 100:
        return "%.0f" % ns
    if ns >= 10:
        return "%.1f" % ns
    return "%.2f" % ns


def fmt_ratio(ratio):
    return "%.2f" % ratio if ratio >= 0.1 else "%.3g" % ratio


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", nargs="?", default="-",
                        help="Google Benchmark JSON output (default: stdin)")
    parser.add_argument("--targets", default="",
                        help="group=max_ratio,... (informational; exit status stays 0)")
    parser.add_argument("--ns-targets", default="",
                        help="group=max_ns,... for ffikit's own ns per item (informational)")
    parser.add_argument("--extra-ns-targets", default="",
                        help="group[/peer]=max_ns,... for ffikit ns minus peer ns (informational)")
    parser.add_argument("--scaling-targets", default="",
                        help="group=min_ratio,... for the thread-scaling table (informational)")
    parser.add_argument("--gbps", action="store_true",
                        help="also print the median GB/s of the benchmarks that count bytes")
    args = parser.parse_args(argv)
    targets = parse_targets(args.targets)
    ns_targets = parse_targets(args.ns_targets)
    extra_ns_targets = parse_targets(args.extra_ns_targets)
    any_targets = bool(targets or ns_targets or extra_ns_targets)
    show_diff = bool(ns_targets or extra_ns_targets)
    scaling_targets = parse_targets(args.scaling_targets)

    if args.json == "-":
        text = sys.stdin.read()
    else:
        try:
            with open(args.json, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise SystemExit("ratios.py: %s" % e)
    try:
        data = json.loads(text)
    except ValueError as e:
        raise SystemExit("ratios.py: %s is not JSON: %s" % (args.json, e))

    times = collect(data)
    groups = []  # first-seen order, as the benchmark ran them
    for group, _ in times:
        if group not in groups:
            groups.append(group)

    header = ["group", "ffikit ns", "peer", "peer ns", "ratio ffikit/peer"]
    if show_diff:
        header += ["ffikit-peer ns"]
    if any_targets:
        header += ["target", "status"]
    rows = []
    for group in groups:
        impls = [impl for (g, impl) in times if g == group]
        ours = times.get((group, FFIKIT))
        peers = [impl for impl in impls if impl != FFIKIT]
        if ours is None or not peers:
            missing = "no ffikit run" if ours is None else "no peer run"
            print("ratios.py: group %s skipped: %s" % (group, missing), file=sys.stderr)
            continue
        for peer in peers:
            theirs = times[(group, peer)]
            ratio = ours / theirs if theirs > 0 else float("inf")
            row = [group, fmt_ns(ours), peer, fmt_ns(theirs), fmt_ratio(ratio)]
            if show_diff:
                row += ["%+.2f" % (ours - theirs)]
            if any_targets:
                wanted, met = [], []
                target = lookup(targets, group, peer)
                if target is not None:
                    wanted.append("%.2f" % target)
                    met.append(ratio <= target)
                target = lookup(extra_ns_targets, group, peer)
                if target is not None:
                    wanted.append("peer +%.2f ns" % target)
                    met.append(ours - theirs <= target)
                target = lookup(ns_targets, group, peer)
                if target is not None:
                    wanted.append("%s ns" % fmt_ns(target))
                    met.append(ours <= target)
                if wanted:
                    row += [", ".join(wanted), "ok" if all(met) else "MISSED"]
                else:
                    row += ["", ""]
            rows.append(row)
    for name in list(targets) + list(ns_targets) + list(extra_ns_targets):
        group, _, peer = name.partition("/")
        if group not in groups or (peer and (group, peer) not in times):
            print("ratios.py: target for %s, which has no results" % name, file=sys.stderr)
    scaling = collect_scaling(data)
    for name in scaling_targets:
        group, _, impl = name.partition("/")
        if group not in [g for g, _ in scaling] or (impl and (group, impl) not in scaling):
            print("ratios.py: scaling target for %s, which has no results" % name, file=sys.stderr)

    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(["---"] + ["---:", "---", "---:", "---:"] + (["---:"] if show_diff else []) +
                         (["---:", "---"] if any_targets else [])) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if scaling:
        print()
        print_scaling(scaling, scaling_targets)
    if args.gbps:
        rates = collect_bytes(data)
        if rates:
            print()
            print_bytes(rates)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
