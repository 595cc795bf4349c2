#!/usr/bin/env bash
# Builds and runs the benchmarks (optimised), then prints the ffikit/peer ratio tables.
#
#   bench/run.sh [OUT] [--only=BINARY] [--runs=N] [extra Google Benchmark flags, e.g. --benchmark_filter=hash]
#
# Runs each binary in turn: ffi_bench (the ffi core), containers_bench (Array, List, Map,
# Dict beside std::vector, std::unordered_map and CPython's list and dict), function_bench
# (packed calls, the global registry and raising errors beside plain C calls,
# std::unordered_map and malloc/C++ exceptions) and tensor_bench (the DLPack round trip,
# small tensors and 64 MiB copies beside malloc/free and memcpy). --only=NAME runs one of them (repeatable).
# Extra flags go to every binary run. --runs=N (default 1) runs each binary N times in turn
# (OUT/<binary>.<k>.json) and then prints, per binary, bench/spread.py's table: the median
# ratio over the runs with its range, the numbers to quote from a shared machine.
# TVM-FFI is a peer when the apache-tvm-ffi wheel is in $FFK_PYTHON's environment (else the
# binaries say so and its rows are missing). Instruction counts: bench/icount.sh.
#
# OUT keeps the full JSON results: a directory (each binary writes OUT/<binary>.json), or a
# path ending in .json (used as is when one binary runs; with several, OUT.json becomes
# OUT.<binary>.json). Default: a new directory under ${TMPDIR:-/tmp}.
# Works from any directory; paths given are relative to the directory it is called from.
set -euo pipefail

caller_dir=$(pwd)
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

out=""
if [[ $# -gt 0 && "$1" != --* ]]; then
  out=$1
  shift
fi
binaries=()
flags=()
runs=1
for a in "$@"; do
  case "$a" in
    --only=*) binaries+=("${a#--only=}") ;;
    --runs=*) runs=${a#--runs=} ;;
    *) flags+=("$a") ;;
  esac
done
if [[ ${#binaries[@]} -eq 0 ]]; then
  binaries=(ffi_bench containers_bench function_bench tensor_bench)
fi
for b in "${binaries[@]}"; do
  case "$b" in
    ffi_bench|containers_bench|function_bench|tensor_bench) ;;
    *) echo "run.sh: unknown benchmark binary '$b' (ffi_bench, containers_bench, function_bench, tensor_bench)" >&2; exit 2 ;;
  esac
done

if [[ -z "$out" ]]; then
  out=$(mktemp -d "${TMPDIR:-/tmp}/ffikit_bench.XXXXXX")
fi
# bazel run executes the binary in its runfiles tree: give it an absolute path.
case "$out" in
  /*) ;;
  *) out="$caller_dir/$out" ;;
esac

# The JSON file for binary $1.
out_file() {
  if [[ "$out" == *.json ]]; then
    if [[ ${#binaries[@]} -eq 1 ]]; then
      echo "$out"
    else
      echo "${out%.json}.$1.json"
    fi
  else
    echo "$out/$1.json"
  fi
}
[[ "$out" == *.json ]] || mkdir -p "$out"

cd "$repo_root"
# The same interpreter as the tests (python_configure reads FFK_PYTHON): containers_bench
# embeds it, and keeping the variable stable avoids refetching @python between commands.
if [[ -z "${FFK_PYTHON:-}" ]]; then
  FFK_PYTHON=$(scripts/bootstrap.sh | tail -n 1)
fi
export FFK_PYTHON

# ffikit/peer targets (largest acceptable ratio), targets in ns (ffikit's own time, or its
# excess over a peer) and thread-scaling targets (smallest acceptable speedup), per binary.
# Informational: a MISSED target never fails the run.
targets_for() {
  case "$1" in
    ffi_bench) echo "--targets retain_release/std_shared_ptr=1.0,any_box_unbox/tvm_ffi_cxx=1.0" ;;
    containers_bench)
      local t
      t="push_1m_array/vector=1.3,push_1m_array/pylist=1.0,push_1m_list/vector=1.3,push_1m_list/pylist=1.0"
      t="$t,map_set_int=1.0,map_set_str=1.0,dict_set_int=1.0,dict_set_str=1.0"
      t="$t,map_get_hit_int=1.0,map_get_hit_str=1.0,map_get_miss_int=1.0,map_get_miss_str=1.0"
      t="$t,dict_get_hit_int=1.0,dict_get_hit_str=1.0,dict_get_miss_int=1.0,dict_get_miss_str=1.0"
      t="$t,iter_sum_1m=1.1,cow_set_10k=1.5,lock_get_int=1.15,lock_set_int=1.15"
      # Issue 13, against TVM-FFI (and umap at 2x for int hits).
      t="$t,push_1m_array/tvm_ffi_cxx=1.0,push_1m_list/tvm_ffi_cxx=1.3,map_get_hit_int/tvm_ffi_cxx=1.0"
      t="$t,dict_get_hit_int/tvm_ffi_cxx=1.0,map_get_hit_int/umap=2.0,dict_get_hit_int/umap=2.0"
      t="$t,map_get_hit_str/tvm_ffi_cxx=0.7"
      echo "--targets $t --scaling-targets map_get_shared=1.8"
      ;;
    function_bench)
      echo "--extra-ns-targets call_2/fnptr=3 --ns-targets registry_get=50 --scaling-targets registry_get_shared/ffikit=1.8,registry_get_disjoint/ffikit=1.8" \
        "--targets call_2/tvm_ffi=1.0,typed_call_2/tvm_ffi=1.5,typed_call_2/tvm_ffi_cxx=1.5"
      ;;
    tensor_bench)
      # The empty_* target is against the two-malloc peer; copy_transposed_64mb has none.
      echo "--ns-targets dlpack_roundtrip_legacy=60,dlpack_roundtrip_versioned=60" \
        "--targets empty_f32_2x3/malloc2=2,empty_f32_16/malloc2=2,copy_contiguous_64mb=1.05,dlpack_roundtrip_legacy/tvm_ffi=1.0,dlpack_roundtrip_versioned/tvm_ffi=1.0 --gbps"
      ;;
  esac
}

if [[ "$runs" -gt 1 ]]; then
  [[ "$out" != *.json ]] || { echo "run.sh: --runs needs OUT to be a directory" >&2; exit 2; }
  for b in "${binaries[@]}"; do bazel build -c opt "//bench:$b"; done
  for k in $(seq 1 "$runs"); do
    for b in "${binaries[@]}"; do
      echo "run $k of $runs: $b ($(cut -d' ' -f1-3 /proc/loadavg) load)"
      bazel run -c opt "//bench:$b" -- --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
        --benchmark_out="$out/$b.$k.json" --benchmark_out_format=json ${flags[@]+"${flags[@]}"} > /dev/null
    done
  done
  for b in "${binaries[@]}"; do
    echo
    echo "$b, $runs runs: $out/$b.*.json"
    echo
    python3 bench/spread.py "$out/$b".*.json
  done
  exit 0
fi

for b in "${binaries[@]}"; do
  json=$(out_file "$b")
  bazel run -c opt "//bench:$b" -- \
    --benchmark_format=json \
    --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=true \
    --benchmark_out="$json" \
    --benchmark_out_format=json \
    ${flags[@]+"${flags[@]}"}

  echo
  echo "$b results: $json"
  echo
  # shellcheck disable=SC2046
  python3 bench/ratios.py "$json" $(targets_for "$b")
  echo
done
