#!/usr/bin/env bash
# Builds and runs the ffi benchmarks (optimised), then prints the ffikit/peer ratio table.
#
#   bench/run.sh [OUT.json] [extra Google Benchmark flags, e.g. --benchmark_filter=hash]
#
# OUT.json (default: a new file under ${TMPDIR:-/tmp}) keeps the full JSON results.
# Works from any directory; paths given are relative to the directory it is called from.
set -euo pipefail

caller_dir=$(pwd)
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

out=""
if [[ $# -gt 0 && "$1" != --* ]]; then
  out=$1
  shift
fi
if [[ -z "$out" ]]; then
  out=$(mktemp "${TMPDIR:-/tmp}/ffi_bench.XXXXXX.json")
fi
# bazel run executes the binary in its runfiles tree: give it an absolute path.
case "$out" in
  /*) ;;
  *) out="$caller_dir/$out" ;;
esac

cd "$repo_root"
bazel run -c opt //bench:ffi_bench -- \
  --benchmark_format=json \
  --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true \
  --benchmark_out="$out" \
  --benchmark_out_format=json \
  "$@"

echo
echo "results: $out"
echo
python3 bench/ratios.py "$out" --targets retain_release=1.0
