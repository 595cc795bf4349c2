#!/usr/bin/env bash
# The guard against lost wins: the benchmarks of two builds, taking turns, as new/old ratios.
#
#   bench/compare.sh [--base=REV] [--runs=N] [--only=installed,containers,python] [--out=DIR]
#                    [--cases=PREFIXES]
#
# Old is REV (default: main), checked out into a detached worktree under OUT; new is this
# working tree, uncommitted changes included. Each is built and installed the README's way:
#   installed    `bazel run //:install -- PREFIX`, then bench/installed/run.sh over both
#                prefixes (the packed call, retain/release, Any, beside TVM-FFI's C ABI)
#   containers   `bazel build -c opt //bench:containers_bench` in each tree
#   python       `pip install --target DIR ./bindings/python` with $FFK_PYTHON (default
#                .venv/bin/python), then bench/python/bench_ffi.py (this tree's copy, so the
#                rows are the same) with PYTHONPATH=DIR; --cases passes its case prefixes
#                (e.g. --cases=nop3,getkey) to bench_ffi.py
# Every suite runs N times (--runs, default 3), the two builds one after the other in each
# run, so that load changes hit both alike; bench/compare.py then prints, per row, the
# new/old time ratio (median over the runs and its range) and marks ffikit rows SLOWER or
# faster beyond the noise, which the peers' rows (the same code in both builds) measure.
#
# The old worktree is a fresh Bazel workspace, so its first build compiles everything
# (minutes on a small machine); --out=DIR keeps the results (default: a new directory under
# $TMPDIR). Informational: nothing fails on a timing, and the exit status is 0 unless a
# build fails. Needs what bench/installed/run.sh and bench/python/run.sh need.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/.." && pwd)

base=main
runs=3
only=installed,containers,python
out=""
cases=""
for a in "$@"; do
  case "$a" in
    --base=*) base=${a#--base=} ;;
    --runs=*) runs=${a#--runs=} ;;
    --only=*) only=${a#--only=} ;;
    --out=*) out=${a#--out=} ;;
    --cases=*) cases=${a#--cases=} ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "compare.sh: unknown argument $a (see --help)" >&2; exit 2 ;;
  esac
done
want() { [[ ",$only," == *",$1,"* ]]; }
python=${FFK_PYTHON:-$repo_root/.venv/bin/python}
# TVM-FFI, the peer every suite measures beside ffikit: the apache-tvm-ffi of
# $FFK_TVM_FFI_PYTHON (default .venv-tvm, which ./setup.sh makes) unless TVM_FFI_ROOT is set.
tvm_python=${FFK_TVM_FFI_PYTHON:-$repo_root/.venv-tvm/bin/python}
if [[ -z "${TVM_FFI_ROOT:-}" && -x "$tvm_python" ]]; then
  TVM_FFI_ROOT=$("$tvm_python" -c 'import importlib.util, os
s = importlib.util.find_spec("tvm_ffi")
print(os.path.dirname(s.origin) if s else "")' 2>/dev/null || true)
  [[ -n "$TVM_FFI_ROOT" ]] && export TVM_FFI_ROOT TVM_FFI_PYTHON=$tvm_python
fi
[[ -n "$out" ]] || out=$(mktemp -d "${TMPDIR:-/tmp}/ffikit_compare.XXXXXX")
mkdir -p "$out"
out=$(cd "$out" && pwd)

old_rev=$(git -C "$repo_root" rev-parse --short "$base^{commit}")
new_rev=$(git -C "$repo_root" rev-parse --short HEAD)
git -C "$repo_root" diff --quiet HEAD -- || new_rev="$new_rev+uncommitted"
old_tree=$out/old-tree
if [[ ! -d "$old_tree" ]]; then
  git -C "$repo_root" worktree add --detach "$old_tree" "$old_rev" >/dev/null 2>&1 ||
    { echo "compare.sh: cannot check out $base into $old_tree" >&2; exit 2; }
fi
cleanup() { git -C "$repo_root" worktree remove --force "$old_tree" >/dev/null 2>&1 || true; }
trap cleanup EXIT
declare -A tree=([old]=$old_tree [new]=$repo_root)
{
  echo "old: $base ($old_rev)   new: working tree ($new_rev)"
  echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/header.txt"

report() {  # title, then the old files and the new files by glob
  local title=$1 oldglob=$2 newglob=$3
  echo
  python3 "$here/compare.py" --title "$title" --old $oldglob --new $newglob | tee "$out/$(echo "$title" | tr ' /' '__').md"
}

if want installed; then
  for side in old new; do
    echo "== installing $side into $out/prefix-$side" >&2
    (cd "${tree[$side]}" && bazel run //:install -- "$out/prefix-$side" >"$out/install-$side.log" 2>&1) ||
      { tail -20 "$out/install-$side.log" >&2; exit 1; }
  done
  "$repo_root/bench/installed/run.sh" --prefix=old="$out/prefix-old" --prefix=new="$out/prefix-new" \
    --runs="$runs" --out="$out/installed" >"$out/installed.log" 2>&1 ||
    { tail -20 "$out/installed.log" >&2; exit 1; }
  report "bench/installed" "$(ls "$out"/installed/old.*.json | sort -V | tr '\n' ' ')" \
    "$(ls "$out"/installed/new.*.json | sort -V | tr '\n' ' ')"
fi

if want containers; then
  mkdir -p "$out/containers"
  for side in old new; do
    echo "== building $side's containers_bench (-c opt)" >&2
    (cd "${tree[$side]}" && bazel build -c opt //bench:containers_bench >"$out/containers-$side.log" 2>&1 &&
      cp -f "$(bazel info -c opt bazel-bin 2>/dev/null)/bench/containers_bench" "$out/containers_bench_$side") ||
      { tail -20 "$out/containers-$side.log" >&2; exit 1; }
  done
  for ((k = 1; k <= runs; ++k)); do
    for side in old new; do
      "$out/containers_bench_$side" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
        --benchmark_min_time=0.1 --benchmark_out="$out/containers/$side.$k.json" --benchmark_out_format=json >/dev/null
      echo "   containers run $k of $side: load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    done
  done
  report "containers_bench" "$(ls "$out"/containers/old.*.json | sort -V | tr '\n' ' ')" \
    "$(ls "$out"/containers/new.*.json | sort -V | tr '\n' ' ')"
fi

if want python; then
  mkdir -p "$out/python"
  "$python" -m pip install -q --disable-pip-version-check -r "$here/python/requirements.txt" >&2
  for side in old new; do
    echo "== building $side's Python package into $out/py-$side" >&2
    rm -rf "$out/py-$side"
    (cd "${tree[$side]}" && "$python" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation \
      --target "$out/py-$side" ./bindings/python >"$out/python-$side.log" 2>&1) ||
      { tail -20 "$out/python-$side.log" >&2; exit 1; }
  done
  for ((k = 1; k <= runs; ++k)); do
    for side in old new; do
      rm -f "$out/python/$side.$k.json"
      PYTHONPATH="$out/py-$side" "$python" "$here/python/bench_ffi.py" --quiet --cases="$cases" \
        -o "$out/python/$side.$k.json" >&2
      echo "   python run $k of $side: load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    done
  done
  report "bench/python bench_ffi" "$(ls "$out"/python/old.*.json | sort -V | tr '\n' ' ')" \
    "$(ls "$out"/python/new.*.json | sort -V | tr '\n' ' ')"
fi
echo
echo "results: $out"
