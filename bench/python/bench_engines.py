#!/usr/bin/env python3
"""Issue 26: a 256 MiB float32 tensor through Ray and Dask, ffikit beside numpy (and torch).

Three measurements, each beside numpy's array of the same shape and bytes:

* **time** of one round trip through a real engine, wall clock (the bytes move through other
  processes: Ray's object store, Dask's worker), one process per run:
  - ``ray``: ``ray.get(ray.put(x))`` (``ray.init(num_cpus=2, include_dashboard=False)``);
  - ``dask``: ``client.gather(client.scatter(x, hash=False))`` on a
    ``LocalCluster(processes=True, n_workers=1, threads_per_worker=1)`` with
    ``Client(direct_to_workers=True)``: the worker deserializes the value and serializes it
    back. ``hash=False`` because hashing would tokenize 256 MiB (numpy's bytes; another type
    through cloudpickle), which is not the transfer.
  - ``dask_sched``: the same with the Client's defaults, so the gather goes through the
    scheduler, whose connections pickle at protocol 4 ("common denominator", distributed's
    scheduler.py). No kind pickles there: each travels by a serializer of Dask's own "dask"
    family, which Dask tries before pickle on every connection: numpy's and torch's are
    distributed's, a Tensor's is ffikit's (``ffikit/_dask.py``: its protocol-5 pickle stream
    in Dask's header, its bytes as Dask's frames, wrapped on loading), on this path and the
    direct one alike.
  Every run starts its engine once and times ffikit, numpy and torch in turns (the order
  rotates each round), so the three share the same load; ratios are taken within a run.
* **memory** of one round trip in the driver, in a fresh process per (engine, kind) after one
  warm-up round trip: bytes allocated through Python's allocators (tracemalloc: pickle's
  in-band bytes, numpy's arrays and Dask's receive buffers; not ffikit's or torch's C
  allocations) and the growth of the process's peak RSS (VmHWM, reset through
  /proc/self/clear_refs), with the split of the RSS held afterwards into private (anonymous)
  and shared (Ray's store) pages. One 256 MiB copy more than numpy shows in one of them.
* **pickle**: ``pickle.dumps(x, protocol=5, buffer_callback=...)``: the in-band stream's size
  and the out-of-band buffers (count and bytes), and the stream without a buffer_callback.
  Where the round trip's result lies (Ray's shared store or private memory) and whether it is
  read-only is read from /proc/self/maps and the result itself.

Run (the engines come from requirements-engines.txt, pyperf from requirements.txt):

    python bench/python/bench_engines.py [--runs=3] [--rounds=7] [--out=DIR]   # all, then the table
    python bench/python/bench_engines.py --report=DIR                           # the table again
    python bench/python/bench_engines.py -o run1.json [--cases=ray,dask]        # one timing run
    bench/python/run.sh OUT --bench=bench_engines --runs=3                      # pyperf-style report

A timing run writes a pyperf JSON file (benchmarks ``<engine>/<kind>``, one value per round
trip), which ``report.py`` also reads. Informational only: nothing here fails on a timing.
"""
from __future__ import annotations

import argparse
import gc
import glob
import importlib.util
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings

ENGINES = ("ray", "dask", "dask_sched")
KINDS = ("ffikit", "numpy", "torch")
TARGET = 1.1  # issue 26: ffikit's round trip <= 1.1x numpy's
MIB = 1 << 20


# ---------------------------------------------------------------- values


def shape_for(size_mib: int) -> tuple[int, int]:
    return (size_mib * MIB // 4 // 1024, 1024)


def make_value(kind: str, size_mib: int):
    """A C-contiguous float32 value of ``size_mib`` MiB holding 0, 1, 2, ... (as float32)."""
    import numpy as np

    shape = shape_for(size_mib)
    a = np.arange(shape[0] * shape[1], dtype=np.float32).reshape(shape)
    if kind == "numpy":
        return a
    if kind == "ffikit":
        import ffikit

        t = ffikit.empty(shape, "float32")  # its own bytes, allocated by ffikit (C)
        np.asarray(t)[...] = a
        return t
    if kind == "torch":
        import torch

        return torch.from_numpy(a).clone()
    raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")


def data_ptr(v) -> int:
    if hasattr(v, "data_ptr"):  # ffikit.Tensor, torch.Tensor
        return int(v.data_ptr())
    return int(v.__array_interface__["data"][0])


def read_only(v) -> bool | None:
    if hasattr(v, "is_read_only"):
        return bool(v.is_read_only)
    if hasattr(v, "flags"):
        return not v.flags.writeable
    return None  # torch has no read-only flag


def mapping_of(addr: int) -> str:
    """The file behind the mapping that holds ``addr`` ("private" for anonymous memory)."""
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            if lo <= addr < hi:
                name = parts[5].strip() if len(parts) > 5 else ""
                return name if name and not name.startswith("[") else "private"
    return "?"


def describe(v, size_mib: int) -> str:
    """What came back: its type, where its bytes lie, read-only or not; checks the values."""
    import numpy as np

    shape = shape_for(size_mib)
    a = np.asarray(v) if type(v).__module__ != "torch" else v.numpy()
    n = shape[0] * shape[1]
    if a.shape != shape or a.dtype != np.float32 or a[0, 1] != 1.0 or a[-1, -1] != np.float32(n - 1):
        raise AssertionError(f"round trip changed the value: {type(v)} {a.shape} {a.dtype}")
    where = mapping_of(data_ptr(v))
    if where != "private":
        where = "shared: " + os.path.basename(where.replace(" (deleted)", ""))
    ro = read_only(v)
    return f"{type(v).__module__}.{type(v).__qualname__}, {where}" + (
        "" if ro is None else (", read-only" if ro else ", writable")) + (
        "" if data_ptr(v) % 4 == 0 else ", unaligned")


# ---------------------------------------------------------------- engines


class Ray:
    name = "ray"

    def __init__(self, size_mib: int):
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        import ray

        self.ray = ray
        # A short temp dir: Ray's socket paths must fit AF_UNIX's 107 bytes.
        self.tmp = tempfile.mkdtemp(prefix="ffkray", dir="/tmp")
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 object_store_memory=max(4 * size_mib, 512) * MIB, _temp_dir=self.tmp,
                 configure_logging=False)

    def roundtrip(self, x):
        ref = self.ray.put(x)
        y = self.ray.get(ref)
        del ref
        return y

    def close(self):
        self.ray.shutdown()


class Dask:
    name = "dask"
    direct: bool | None = True

    def __init__(self, size_mib: int):
        from distributed import Client, LocalCluster

        self.cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                    dashboard_address=None)
        self.client = Client(self.cluster, direct_to_workers=self.direct)

    def roundtrip(self, x):
        fut = self.client.scatter(x, hash=False)
        y = self.client.gather(fut)
        fut.release()
        return y

    def close(self):
        self.client.close()
        self.cluster.close()


class DaskViaScheduler(Dask):
    name = "dask_sched"
    direct = None  # the Client's default


def start(engine: str, size_mib: int):
    warnings.filterwarnings("ignore")
    return {"ray": Ray, "dask": Dask, "dask_sched": DaskViaScheduler}[engine](size_mib)


def settle(engine) -> None:
    """Lets the engine drop what the last round trip left (Ray frees store objects and Dask
    worker keys asynchronously), outside the timed part."""
    gc.collect()
    time.sleep(0.05)


# ---------------------------------------------------------------- timing run


def versions() -> str:
    """ffikit's version and where it was imported from, and the engines' versions."""
    import importlib.metadata as md

    import ffikit

    out = [f"{getattr(ffikit, '__version__', '?')} ({os.path.dirname(os.path.dirname(ffikit.__file__))})"]
    for dist in ("ray", "distributed", "numpy", "torch"):
        try:
            out.append(f"{dist} {md.version(dist)}")
        except md.PackageNotFoundError:
            pass
    return ", ".join(out)


def time_run(args) -> None:
    import pyperf

    engines = [e for e in ENGINES if e in args.cases]
    kinds = [k for k in KINDS if k in args.kinds]
    benches = []
    for engine_name in engines:
        t_start = time.perf_counter()
        engine = start(engine_name, args.size_mib)
        started = time.perf_counter() - t_start
        values = {k: make_value(k, args.size_mib) for k in kinds}
        times: dict[str, list[float]] = {k: [] for k in kinds}
        warm: dict[str, float] = {}
        info: dict[str, str] = {}
        for k in kinds:  # warm-up round trip, and what comes back
            t0 = time.perf_counter()
            y = engine.roundtrip(values[k])
            warm[k] = time.perf_counter() - t0
            info[k] = describe(y, args.size_mib)
            del y
            settle(engine)
        loads = [os.getloadavg()[0]]
        for r in range(args.rounds):
            order = kinds[r % len(kinds):] + kinds[:r % len(kinds)]
            for k in order:
                t0 = time.perf_counter()
                y = engine.roundtrip(values[k])
                times[k].append(time.perf_counter() - t0)
                del y
                settle(engine)
            loads.append(os.getloadavg()[0])
        engine.close()
        del values
        gc.collect()
        for k in kinds:
            meta = {"name": f"{engine_name}/{k}", "loops": 1, "unit": "second",
                    "description": f"{args.size_mib} MiB float32 round trip through {engine_name}",
                    "ffk_result": info[k], "ffk_engine_start_s": round(started, 2),
                    "ffk_load_min": min(loads), "ffk_load_max": max(loads),
                    "ffikit_version": versions()}
            run = pyperf.Run(times[k], warmups=[(1, warm[k])], metadata=meta, collect_metadata=True)
            benches.append(pyperf.Benchmark([run]))
        if not args.quiet:
            for k in kinds:
                print(f"{engine_name}/{k}: median {statistics.median(times[k]) * 1e3:.1f} ms "
                      f"({min(times[k]) * 1e3:.1f}-{max(times[k]) * 1e3:.1f}); {info[k]}", file=sys.stderr)
    suite = pyperf.BenchmarkSuite(benches)
    suite.dump(args.output, replace=True)


# ---------------------------------------------------------------- memory and pickle


def status() -> dict[str, int]:
    """The process's memory counters from /proc/self/status, in bytes."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmHWM", "VmRSS", "RssAnon", "RssShmem", "RssFile"):
                out[key] = int(rest.split()[0]) * 1024
    return out


def reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:  # Linux >= 4.0: "5" resets VmHWM to VmRSS
        f.write("5")


def memory_one(engine_name: str, kind: str, size_mib: int) -> dict:
    engine = start(engine_name, size_mib)
    x = make_value(kind, size_mib)
    y = engine.roundtrip(x)  # warm-up: code paths, the store's and the comm's buffers
    del y
    settle(engine)
    time.sleep(0.5)
    loads = spy_on_loader() if kind == "ffikit" else []
    tracemalloc.start()
    base = status()
    reset_peak()
    y = engine.roundtrip(x)
    gc.collect()  # what the engine's reference cycles held is not the round trip's result
    cur, peak = tracemalloc.get_traced_memory()
    after = status()
    tracemalloc.stop()
    result = describe(y, size_mib)
    del y
    engine.close()
    return {"engine": engine_name, "kind": kind, "traced_peak": peak, "traced_held": cur,
            "rss_peak_growth": after["VmHWM"] - base["VmRSS"],
            "anon_held": after["RssAnon"] - base["RssAnon"],
            "shmem_held": after["RssShmem"] - base["RssShmem"], "result": result,
            "loader": "; ".join(loads)}


def spy_on_loader() -> list[str]:
    """Wraps ffikit's protocol-5 loader in this process (pickle finds it by name) to record
    what buffer the engine handed it and whether the tensor wraps it or copied it."""
    try:
        from ffikit import _tensor
    except ImportError:
        return []
    seen: list[str] = []
    real = getattr(_tensor, "_from_pickle_buffer", None)
    if real is None:
        return seen

    def loader(buf, shape, dtype, device):
        import numpy as np

        mv = memoryview(buf)
        addr = np.frombuffer(mv.cast("B") if mv.contiguous else bytes(1), dtype=np.uint8).ctypes.data
        t = real(buf, shape, dtype, device)
        seen.append(f"{type(buf).__name__} at address % 64 = {addr % 64}"
                    + (", read-only" if mv.readonly else "") + ": "
                    + ("wrapped" if t.data_ptr() == addr else "copied"))
        return t

    # Tensor.__reduce_ex__ names whatever _tensor._from_pickle_buffer is when it pickles (the
    # Dask serializer pickles in this process too): the spy answers to the loader's own name,
    # so the stream stays ffikit._tensor._from_pickle_buffer and the worker loads the real one.
    loader.__module__, loader.__qualname__ = real.__module__, real.__qualname__
    _tensor._from_pickle_buffer = loader
    return seen


def pickle_one(kind: str, size_mib: int) -> dict:
    x = make_value(kind, size_mib)
    bufs: list[pickle.PickleBuffer] = []
    stream = pickle.dumps(x, protocol=5, buffer_callback=bufs.append)
    sizes = [memoryview(b).nbytes for b in bufs]
    back = pickle.loads(stream, buffers=bufs)
    result = describe(back, size_mib)
    del back
    inband = len(pickle.dumps(x, protocol=5))
    return {"kind": kind, "stream": len(stream), "buffers": len(bufs), "buffer_bytes": sum(sizes),
            "no_callback": inband, "result": result}


def child(argv: list[str]) -> dict:
    out = subprocess.run([sys.executable, os.path.abspath(__file__), *argv], capture_output=True,
                         text=True, check=False)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        return {"error": (out.stderr.strip().splitlines() or ["exit status %d" % out.returncode])[-1]}
    return json.loads(lines[-1])


# ---------------------------------------------------------------- report


def mib(n: float) -> str:
    return f"{n / MIB:.1f} MiB" if abs(n) >= MIB // 10 else f"{n / 1024:.0f} KiB"


def report(out: str) -> None:
    import pyperf

    runs = sorted(glob.glob(os.path.join(out, "run*.json")))
    per: dict[str, dict[int, list[float]]] = {}
    meta: dict[str, dict] = {}
    loads: list[float] = []
    for i, path in enumerate(runs):
        for b in pyperf.BenchmarkSuite.load(path).get_benchmarks():
            per.setdefault(b.get_name(), {})[i] = list(b.get_values())
            m = dict(b.get_metadata())
            meta[b.get_name()] = m
            loads += [m.get("ffk_load_min", 0.0), m.get("ffk_load_max", 0.0)]
    mem = {(m["engine"], m["kind"]): m for m in json.load(open(os.path.join(out, "memory.json")))} \
        if os.path.exists(os.path.join(out, "memory.json")) else {}
    pk = {p["kind"]: p for p in json.load(open(os.path.join(out, "pickle.json")))} \
        if os.path.exists(os.path.join(out, "pickle.json")) else {}
    size = meta and next(iter(meta.values())).get("description", "").split(" ")[0]
    first = pyperf.BenchmarkSuite.load(runs[0]).get_metadata() if runs else {}
    print(f"{len(runs)} run(s) of {size} MiB float32 round trips, {first.get('cpu_count', '?')} CPUs "
          f"({first.get('cpu_model_name', '?')}), CPython {first.get('python_version', '?')}; "
          f"ffikit {next(iter(meta.values())).get('ffikit_version', '?') if meta else '?'}; "
          f"1-minute load average during the runs {min(loads, default=0):.1f} - {max(loads, default=0):.1f}.\n")
    print("| engine | kind | round trip ms, median (min-max) | per-run medians ms | ffikit / this, median (range over runs) | target | what comes back |")
    print("|---|---|---:|---|---|---|---|")
    for name, by_run in per.items():
        engine, kind = name.split("/")
        values = [v for r in by_run.values() for v in r]
        meds = [statistics.median(r) for r in by_run.values()]
        ratio = goal = ""
        ours = per.get(f"{engine}/ffikit", {})
        if kind != "ffikit" and ours:
            rs = [statistics.median(ours[i]) / statistics.median(by_run[i]) for i in by_run if i in ours]
            ratio = f"{statistics.median(rs):.2f} ({min(rs):.2f}-{max(rs):.2f})"
            if kind == "numpy":
                met = sum(r <= TARGET for r in rs)
                goal = f"<= {TARGET}: " + ("met" if met == len(rs) else "**missed**" if not met else "unstable")
        print(f"| {engine} | {kind} | {statistics.median(values) * 1e3:.0f} ({min(values) * 1e3:.0f}-"
              f"{max(values) * 1e3:.0f}) | {' / '.join(f'{m * 1e3:.0f}' for m in meds)} | {ratio} | {goal} | "
              f"{meta[name].get('ffk_result', '')} |")
    if mem:
        print("\nMemory in the driver for one round trip (fresh process, after a warm-up round trip):\n")
        print("| engine | kind | tracemalloc peak | tracemalloc held after (gc'd) | peak RSS growth | private RSS held | shared RSS held |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for (engine, kind), m in mem.items():
            if "error" in m:
                print(f"| {engine} | {kind} | failed: {m['error']} | | | | |")
                continue
            print(f"| {engine} | {kind} | {mib(m['traced_peak'])} | {mib(m['traced_held'])} | "
                  f"{mib(m['rss_peak_growth'])} | {mib(m['anon_held'])} | {mib(m['shmem_held'])} |")
        for (engine, kind), m in mem.items():
            if m.get("loader"):
                print(f"\n{engine}: ffikit's loader in the driver got {m['loader']}.", end="")
        print()
    if pk:
        print("\n`pickle.dumps(x, protocol=5, buffer_callback=...)`:\n")
        print("| kind | in-band stream | out-of-band buffers | their bytes | stream without buffer_callback | loads(...) gives |")
        print("|---|---:|---:|---:|---:|---|")
        for kind, p in pk.items():
            if "error" in p:
                print(f"| {kind} | failed: {p['error']} | | | | |")
                continue
            print(f"| {kind} | {p['stream']:,} B | {p['buffers']} | {mib(p['buffer_bytes'])} | "
                  f"{mib(p['no_callback'])} | {p['result']} |")


# ---------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", help="one timing run: write its pyperf JSON here")
    ap.add_argument("--out", help="directory for the runs, memory.json and pickle.json (default: a new one)")
    ap.add_argument("--report", metavar="DIR", help="print the tables of a finished --out directory")
    ap.add_argument("--runs", type=int, default=3, help="timing runs, each a fresh process (3)")
    ap.add_argument("--rounds", type=int, default=7, help="timed round trips per kind and run (7)")
    ap.add_argument("--size-mib", type=int, default=256)
    ap.add_argument("--cases", default="", help="engines, comma-separated (ray,dask,dask_sched; empty: all)")
    ap.add_argument("--kinds", default="", help="ffikit,numpy,torch (empty: all)")
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--memory-one", nargs=2, metavar=("ENGINE", "KIND"), help=argparse.SUPPRESS)
    ap.add_argument("--pickle-one", metavar="KIND", help=argparse.SUPPRESS)
    args, _ = ap.parse_known_args()  # run.sh passes pyperf options too
    args.cases = [c for c in args.cases.split(",") if c] or list(ENGINES)
    args.kinds = [k for k in args.kinds.split(",") if k] or list(KINDS)
    if not any(c in ENGINES for c in args.cases):  # run.sh's "" or another script's prefixes
        args.cases = list(ENGINES)
    if args.memory_one:
        print(json.dumps(memory_one(*args.memory_one, args.size_mib)))
        return
    if args.pickle_one:
        print(json.dumps(pickle_one(args.pickle_one, args.size_mib)))
        return
    if args.report:
        report(args.report)
        return
    missing = [m for m in ("ray", "distributed", "torch") if importlib.util.find_spec(m) is None]
    for m in missing:  # say so, measure the rest
        print(f"[engines] skipping {m}: not installed in {sys.executable}"
              + (" (pip install -r requirements-engines.txt)" if m != "torch" else ""), file=sys.stderr)
    args.cases = [c for c in args.cases if {"ray": "ray", "dask": "distributed", "dask_sched": "distributed"}[c] not in missing]
    args.kinds = [k for k in args.kinds if k not in missing]
    if not args.cases:
        sys.exit("bench_engines.py: neither Ray nor Dask distributed is installed")
    if args.output:
        time_run(args)
        return
    out = args.out or tempfile.mkdtemp(prefix="ffikit_engines.", dir=os.environ.get("TMPDIR", "/tmp"))
    os.makedirs(out, exist_ok=True)
    common = [f"--size-mib={args.size_mib}", f"--kinds={','.join(args.kinds)}"]
    pk = [child(["--pickle-one", k, *common]) | {"kind": k} for k in args.kinds]
    json.dump(pk, open(os.path.join(out, "pickle.json"), "w"), indent=1)
    for k in range(1, args.runs + 1):
        print(f"[engines] run {k} of {args.runs} (load: {os.getloadavg()[0]:.2f})", file=sys.stderr)
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "-o", os.path.join(out, f"run{k}.json"),
                            f"--rounds={args.rounds}", f"--cases={','.join(args.cases)}", *common]
                           + (["--quiet"] if args.quiet else []), check=False)
        if r.returncode:
            print(f"[engines] run {k} failed (exit status {r.returncode})", file=sys.stderr)
    if not args.no_memory:
        mem = []
        for e in args.cases:
            for kind in args.kinds:
                print(f"[engines] memory: {e}/{kind}", file=sys.stderr)
                mem.append(child(["--memory-one", e, kind, *common]) | {"engine": e, "kind": kind})
        json.dump(mem, open(os.path.join(out, "memory.json"), "w"), indent=1)
    print(f"[engines] results in {out}", file=sys.stderr)
    report(out)


if __name__ == "__main__":
    main()
