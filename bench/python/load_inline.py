#!/usr/bin/env python3
"""ffikit.cpp.load_inline beside tvm_ffi.cpp.load_inline: first build and cached load.

Each builds a small C++ module with one function adding two ints, exported typed, in the
same run, interleaved, each repetition with a fresh cache directory:

  ffikit      an ffk_safe_call routine exported through functions={"add": "(int, int) -> int"}
              (the C headers only);
  ffikit_hpp  the plain C++ function `int64_t add(int64_t, int64_t)` exported with
              <ffikit/ffikit.hpp>'s FFK_EXPORT_TYPED_FUNC (the counterpart of tvm_ffi's way);
  tvm_ffi     that plain function with functions="add" (TVM_FFI_DLL_EXPORT_TYPED_FUNC).

Two timings per side:

  first build   load_inline in a fresh process with an empty cache: compile, link, load;
  cached load   load_inline in another fresh process with that cache: no compiler runs.

Only the load_inline call is timed (wall clock, time.perf_counter), not the interpreter's
start or the import; each worker checks the function answers add(20, 22) == 42. The two
packages live in different interpreters (tvm_ffi is no dependency of ffikit), so each
side runs under its own Python:

    python bench/python/load_inline.py [--reps 5] [--ffikit-python PY] [--tvm-python PY]

--ffikit-python defaults to this interpreter, --tvm-python to /tmp/tvmvenv/bin/python.
Prints the median and min-max per case and the ratio of the medians.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

FFIKIT_SRC = r"""
static int add(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  *result = ffk_any_int(args[0].v_int + args[1].v_int);
  return 0;
}
"""
# The same plain C++ function as tvm_ffi's, exported through ffikit.hpp (deduced signature).
FFIKIT_HPP_SRC = """#include <ffikit/ffikit.hpp>
static int64_t add(int64_t a, int64_t b) { return a + b; }
FFK_EXPORT_TYPED_FUNC(add, add)
"""
TVM_SRC = "int64_t add(int64_t a, int64_t b) { return a + b; }\n"


def worker(impl: str, cache: str) -> None:
    """Times one load_inline in this process and prints {"seconds": ...}."""
    if impl in ("ffikit", "ffikit_hpp"):
        os.environ["FFIKIT_CACHE_DIR"] = cache
        from ffikit import cpp

        start = time.perf_counter()
        if impl == "ffikit":
            m = cpp.load_inline("bench_add", cpp_sources=FFIKIT_SRC, functions={"add": "(int, int) -> int"})
        else:
            m = cpp.load_inline("bench_add", cpp_sources=FFIKIT_HPP_SRC)
        seconds = time.perf_counter() - start
    else:
        os.environ["TVM_FFI_CACHE_DIR"] = cache
        sys.modules["torch"] = None  # type: ignore[assignment]  # tvm_ffi would import it when present
        import tvm_ffi.cpp

        start = time.perf_counter()
        m = tvm_ffi.cpp.load_inline("bench_add", cpp_sources=TVM_SRC, functions="add")
        seconds = time.perf_counter() - start
    if m.add(20, 22) != 42:
        raise SystemExit(f"{impl}: add(20, 22) gave {m.add(20, 22)}")
    print(json.dumps({"seconds": seconds}))


def run_worker(python: str, impl: str, cache: str) -> float:
    proc = subprocess.run([python, os.path.abspath(__file__), "--worker", impl, "--cache", cache],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{impl} worker failed ({python}):\n{proc.stdout}\n{proc.stderr}")
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["seconds"])


def fmt(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--ffikit-python", default=sys.executable)
    ap.add_argument("--tvm-python", default="/tmp/tvmvenv/bin/python")
    ap.add_argument("--json", help="also write the raw times here")
    ap.add_argument("--worker", choices=["ffikit", "ffikit_hpp", "tvm_ffi"], help=argparse.SUPPRESS)
    ap.add_argument("--cache", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.cache)
        return

    pythons = {"ffikit": args.ffikit_python, "ffikit_hpp": args.ffikit_python, "tvm_ffi": args.tvm_python}
    times: dict[str, dict[str, list[float]]] = {impl: {"first build": [], "cached load": []} for impl in pythons}
    for rep in range(args.reps):
        for impl, python in pythons.items():
            cache = tempfile.mkdtemp(prefix=f"load_inline_{impl}_")
            try:
                times[impl]["first build"].append(run_worker(python, impl, cache))
                times[impl]["cached load"].append(run_worker(python, impl, cache))
            finally:
                shutil.rmtree(cache, ignore_errors=True)
        print(f"rep {rep + 1}/{args.reps}: " + ", ".join(
            f"{impl} {fmt(t['first build'][-1])} / {fmt(t['cached load'][-1])}" for impl, t in times.items()),
            file=sys.stderr)

    print(f"| case | impl | median | min - max | values ({args.reps} runs) |")
    print("|---|---|---:|---:|---|")
    for case in ("first build", "cached load"):
        for impl in pythons:
            v = times[impl][case]
            print(f"| {case} | {impl} | {fmt(statistics.median(v))} | {fmt(min(v))} - {fmt(max(v))} | "
                  + " / ".join(fmt(x) for x in v) + " |")
    print()
    for case in ("first build", "cached load"):
        for impl in ("ffikit", "ffikit_hpp"):
            ratio = statistics.median(times[impl][case]) / statistics.median(times["tvm_ffi"][case])
            print(f"{case}: {impl} / tvm_ffi median = {ratio:.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(times, f, indent=1)


if __name__ == "__main__":
    main()
