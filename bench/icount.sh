#!/usr/bin/env bash
# Instructions per iteration of benchmarks, counted by valgrind's callgrind: numbers that do
# not move with the load of a shared machine, as the timings in bench/README.md do.
#
#   bench/icount.sh BINARY BENCHMARK...    e.g. bench/icount.sh function_bench call_2/ffikit call_2/tvm_ffi
#
# BINARY is one of bench/'s binaries built with -c opt (bench/run.sh builds them, or
# `bazel build -c opt //bench:BINARY`). Each BENCHMARK (an exact name) runs alone under
# callgrind. Google Benchmark runs it several times (1, 10, 100, ... iterations, then the
# final count), logging each count with --v=2; the instructions executed inside the
# benchmark's function (everything its loop calls, plus its setup: one checking call and
# the containers it makes, amortised over the iterations) over the sum of those counts is
# the figure printed. Container benchmarks count one iteration as the whole loop (1M pushes,
# 100k lookups); divide by the items for a per-item count (the "per item" column does).
set -euo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $# -ge 2 ]] || { echo "usage: bench/icount.sh BINARY BENCHMARK..." >&2; exit 2; }
bin="$repo_root/bazel-out/k8-opt/bin/bench/$1"
shift
[[ -x "$bin" ]] || { echo "icount.sh: $bin is not built (bazel build -c opt //bench:$(basename "$bin"))" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for name in "$@"; do
  # Exact, but for the suffixes Google Benchmark appends (/min_time:0.200 ...).
  filter="^$(printf '%s' "$name" | sed 's/[][().*+?^$|\\]/\\&/g')(/|\$)"
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$bin" --benchmark_filter="$filter" \
    --benchmark_min_time=0.05 --v=2 > "$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
  python3 - "$tmp/cg" "$name" "$tmp/log" <<'EOF'
import re, subprocess, sys
cg, name, log = sys.argv[1:]
ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", cg], capture_output=True, text=True).stdout
# The benchmark function: the largest inclusive count of a function in bench/ taking a
# benchmark::State& (its own entry; code inlined into it from headers is listed apart, as
# parts of it).
ir = max([int(m.group(1).replace(",", "")) for m in
          re.finditer(r"^\s*([\d,]+) \([^)]*\)\s+\S*/bench/[\w.]+\.cc:[^\n]*benchmark::State&", ann, re.M)] or [0])
runs = [int(m.group(1)) for m in re.finditer(r"LOG\(2\): Running " + re.escape(name) + r"(?:/\S*)? for (\d+)", open(log).read())]
if ir == 0 or not runs:
    sys.exit(f"icount.sh: no count for {name} (is the name exact?)")
print(f"{name}: {ir / sum(runs):,.0f} instructions per iteration ({sum(runs)} iterations in {len(runs)} runs)")
EOF
done
