#!/usr/bin/env python3
"""Markdown tables from the pyperf JSON files of bench_ffi.py, one file per run.

    python report.py run1.json [run2.json ...]

Files named ``<run>.<part>.json`` (``run1.part0.json``, ``run1.part1.json``) are parts of one
run, measured side by side: their benchmarks are taken together.

Table 1, per ``<case>/<impl>``: the median over all runs' values, pyperf's mean +- std,
min-max over all values, and the spread of the per-run medians. Table 2, per case: the ratio
of ffikit's median to each peer's, taken within each run (peers always share a run), as the
median of those per-run ratios and their range, against the issue's target. "met" means
every run met the target, "missed" that none did, "unstable" that the runs disagree.
Timings never fail anything: this script only prints.
"""
from __future__ import annotations

import os
import statistics
import sys

import pyperf

BUILTINS = {"tuple", "list", "dict"}
# (case without its [variant], peer) -> the largest acceptable ffikit/peer ratio (issues 12, 14, 15, 27).
TARGETS = {
    ("nop3", "tvm_ffi"): 0.6, ("nop3", "python"): 2.0,
    ("nop3", "nanobind_args"): 1.0, ("nop0", "nanobind_args"): 1.2,  # issue 27; issue 37: nop3 of a quick Function
    ("apply", "tvm_ffi"): 0.8, ("echo", "tvm_ffi"): 0.8,
    **{(c, "builtin"): 1.5 for c in ("getitem", "len", "getkey", "get", "contains")},
    **{(c, "builtin"): 2.0 for c in ("iter", "build", "append")},
    **{(c, "tvm_ffi"): 0.2 for c in ("getitem", "len", "getkey", "get", "contains", "iter", "build", "append")},
    ("from_dlpack", "numpy"): 1.05, ("roundtrip", "tvm_ffi"): 0.75,
    ("nop_arrays", "tvm_ffi"): 0.8, ("nop_torch", "tvm_ffi"): 0.8,
    **{(c, "tvm_ffi"): 0.5 for c in ("enum_get", "enum_get_int", "enum_call", "enum_attr", "enum_iter")},  # issue 36
    ("ray", "numpy"): 1.1, ("dask", "numpy"): 1.1, ("dask_sched", "numpy"): 1.1,  # issue 26 (bench_engines.py)
}


def fmt_ns(seconds: float, scale: float | None = None) -> str:
    """ns, or us from 10 us up, ms from 10 ms up; ``scale`` picks the unit from another value (a row's median)."""
    ns = seconds * 1e9
    if (scale if scale is not None else seconds) * 1e3 >= 10:
        return f"{ns / 1e6:.1f} ms"
    if (scale if scale is not None else seconds) * 1e9 >= 10_000:
        return f"{ns / 1000:.1f} us"
    return f"{ns:.0f}" if ns >= 100 else f"{ns:.1f}"


def load(paths: list[str]) -> dict[str, dict[int, list[float]]]:
    """name -> {run index: values in seconds}, grouped by case; a run still in progress may lack some."""
    runs: dict[str, dict[int, list[float]]] = {}
    run_ids: dict[str, int] = {}
    for path in paths:
        k = run_ids.setdefault(os.path.basename(path).split(".")[0], len(run_ids))
        for bench in pyperf.BenchmarkSuite.load(path).get_benchmarks():
            runs.setdefault(bench.get_name(), {})[k] = list(bench.get_values())
    order = {}  # cases in the order they first appear
    for name in runs:
        order.setdefault(name.rsplit("/", 1)[0], len(order))
    return dict(sorted(runs.items(), key=lambda kv: order[kv[0].rsplit("/", 1)[0]]))


def target(case: str, peer: str) -> float | None:
    base = case.split("[")[0]
    return TARGETS.get((base, peer)) or (TARGETS.get((base, "builtin")) if peer in BUILTINS else None)


def times_table(runs: dict[str, dict[int, list[float]]]) -> None:
    print("| case | impl | median ns | mean +- std ns | min - max ns | run medians ns |")
    print("|---|---|---:|---:|---:|---|")
    for name, per_run in runs.items():
        case, impl = name.rsplit("/", 1)
        values = [v for run in per_run.values() for v in run]
        std = statistics.stdev(values) if len(values) > 1 else 0.0
        mid = statistics.median(values)
        medians = " / ".join(fmt_ns(statistics.median(run), mid) for run in per_run.values())
        print(f"| {case} | {impl} | {fmt_ns(mid)} | {fmt_ns(statistics.mean(values), mid)} +- {fmt_ns(std, mid)} | "
              f"{fmt_ns(min(values), mid)} - {fmt_ns(max(values), mid)} | {medians} |")


def ratios_table(runs: dict[str, dict[int, list[float]]]) -> None:
    print("| case | ratio | median | range over runs | target | status |")
    print("|---|---|---:|---:|---:|---|")
    cases: dict[str, dict[str, dict[int, float]]] = {}
    for name, per_run in runs.items():
        case, impl = name.rsplit("/", 1)
        cases.setdefault(case, {})[impl] = {k: statistics.median(run) for k, run in per_run.items()}
    for case, impls in cases.items():
        # ffikit against every peer; a variant of ffikit's (``ffikit_gil_held``: the same Function
        # with release_gil off) against the peers that are not ffikit.
        for mine in [i for i in impls if i == "ffikit" or i.startswith("ffikit_")]:
            ours = impls[mine]
            for peer, theirs in impls.items():
                if peer == mine or (mine != "ffikit" and peer.startswith("ffikit")):
                    continue
                ratios = [ours[k] / theirs[k] for k in ours if k in theirs]
                if not ratios:
                    continue
                goal = target(case, peer)
                status = ""
                if goal is not None:
                    met = sum(r <= goal for r in ratios)
                    status = "met" if met == len(ratios) else "**missed**" if met == 0 else "unstable"
                print(f"| {case} | {mine} / {peer} | {statistics.median(ratios):.2f} | "
                      f"{min(ratios):.2f} - {max(ratios):.2f} | {'' if goal is None else f'<= {goal}'} | {status} |")


def machine(paths: list[str]) -> None:
    meta = dict(pyperf.BenchmarkSuite.load(paths[0]).get_metadata())
    loads, dates = [], []
    for path in paths:
        for bench in pyperf.BenchmarkSuite.load(path).get_benchmarks():
            for run in bench.get_runs():
                loads.append(run.get_metadata().get("load_avg_1min", 0.0))
                dates.append(str(run.get_metadata().get("date", "?")))
    meta["date"] = f"{min(dates, default='?')[:16]} - {max(dates, default='?')[11:16]} UTC"
    nruns = len({os.path.basename(p).split(".")[0] for p in paths})
    print(f"{nruns} run(s), {meta.get('date', '?')}, {meta.get('cpu_count', '?')} CPUs "
          f"({meta.get('cpu_model_name', '?')}), {meta.get('python_implementation', '')} "
          f"{meta.get('python_version', '?')}, ffikit {meta.get('ffikit_version', '?')}, "
          f"tvm_ffi {meta.get('tvm_ffi_version', '?')}; 1-minute load average during the runs "
          f"{min(loads, default=0):.1f} - {max(loads, default=0):.1f}.\n")


def main(paths: list[str]) -> None:
    if not paths:
        sys.exit(__doc__)
    runs = load(paths)
    machine(paths)
    times_table(runs)
    print()
    ratios_table(runs)


if __name__ == "__main__":
    main(sys.argv[1:])
