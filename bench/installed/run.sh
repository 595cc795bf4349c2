#!/usr/bin/env bash
# ffikit's calls measured from the library a user installs, beside TVM-FFI's wheel library
# in the same process (bench/installed/README section of bench/README.md has the tables).
#
#   bench/installed/run.sh [--builds=default,opt,wheel] [--prefix=NAME=DIR]... [--runs=N]
#                          [--icount] [--python=PY] [--out=DIR] [extra Google Benchmark flags]
#
# For each build it installs ffikit the README's way into a temporary prefix:
#   default   bazel run //:install -- PREFIX        (the default, non-opt configuration)
#   opt       bazel run -c opt //:install -- PREFIX
#   wheel     the libffikit.so that `pip install ./bindings/python` put in PY's environment
#             (--python=PY, default $FFK_PYTHON; its ffikit/lib/pkgconfig/ffikit.pc)
# --prefix=NAME=DIR adds an existing install (DIR/lib/pkgconfig/ffikit.pc) under the name
# NAME without building (e.g. a baseline installed from another commit); with only
# --prefix given no build is installed. Then it compiles installed_bench.cc with
# `pkg-config --cflags --libs ffikit` (PKG_CONFIG_PATH=PREFIX/lib/pkgconfig) and
# tvm_side.cc against TVM-FFI's wheel (-I/-L/-rpath to its include/ and lib/),
# runs each build's binary N times, the builds taking turns (--runs, default 3; 5
# repetitions each, medians), and prints, per build, bench/spread.py's table: the median ffikit/peer ratio over the runs with its range.
# --icount also counts instructions per call under callgrind (bench/installed/icount.sh,
# plain C drivers, no Google Benchmark) for every build and for TVM-FFI.
#
# TVM-FFI is found as the apache-tvm-ffi package of $TVM_FFI_PYTHON (default: PY), or at
# $TVM_FFI_ROOT (a directory with include/ and lib/libtvm_ffi.so). Needs a C/C++ compiler,
# pkg-config and Google Benchmark (libbenchmark-dev); valgrind for --icount. Not part of
# ./test.sh: nothing here passes or fails on a number. Works from any directory.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)

builds=""
prefixes=()
runs=3
icount=0
py=${FFK_PYTHON:-python3}
out=""
flags=()
for a in "$@"; do
  case "$a" in
    --builds=*) builds=${a#--builds=} ;;
    --prefix=*=*) prefixes+=("${a#--prefix=}") ;;
    --runs=*) runs=${a#--runs=} ;;
    --icount) icount=1 ;;
    --python=*) py=${a#--python=} ;;
    --out=*) out=${a#--out=} ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) flags+=("$a") ;;
  esac
done
if [[ -z "$builds" && ${#prefixes[@]} -eq 0 ]]; then builds=default,opt; fi
[[ -n "$out" ]] || out=$(mktemp -d "${TMPDIR:-/tmp}/ffikit_installed.XXXXXX")
mkdir -p "$out"
out=$(cd "$out" && pwd)

tvm_root=${TVM_FFI_ROOT:-}
if [[ -z "$tvm_root" ]]; then
  tvm_root=$("${TVM_FFI_PYTHON:-$py}" -c 'import importlib.util, os
s = importlib.util.find_spec("tvm_ffi")
print(os.path.dirname(s.origin) if s else "")' 2>/dev/null || true)
fi
if [[ -z "$tvm_root" || ! -f "$tvm_root/include/tvm/ffi/c_api.h" || ! -f "$tvm_root/lib/libtvm_ffi.so" ]]; then
  echo "run.sh: TVM-FFI not found: pip install apache-tvm-ffi into \$TVM_FFI_PYTHON's (or $py's) environment, or set TVM_FFI_ROOT" >&2
  exit 2
fi
CXX=${CXX:-c++}
CC=${CC:-cc}

# name -> pkg-config directory
declare -A pcdir
order=()
for b in ${builds//,/ }; do
  case "$b" in
    default|opt)
      prefix="$out/install-$b"
      rm -rf "$prefix"
      mode=(); [[ "$b" == opt ]] && mode=(-c opt)
      echo "== installing the $b build into $prefix" >&2
      (cd "$repo_root" && bazel run "${mode[@]}" //:install -- "$prefix" >"$out/install-$b.log" 2>&1) ||
        { cat "$out/install-$b.log" >&2; exit 1; }
      pcdir[$b]="$prefix/lib/pkgconfig" ;;
    wheel)
      d=$("$py" -c 'import importlib.util, os
s = importlib.util.find_spec("ffikit")
print(os.path.join(list(s.submodule_search_locations)[0], "lib", "pkgconfig") if s else "")')
      [[ -n "$d" && -f "$d/ffikit.pc" ]] || { echo "run.sh: no ffikit wheel in $py's environment (pip install ./bindings/python)" >&2; exit 2; }
      pcdir[wheel]=$d ;;
    *) echo "run.sh: unknown build '$b' (default, opt, wheel)" >&2; exit 2 ;;
  esac
  order+=("$b")
done
for p in "${prefixes[@]}"; do
  name=${p%%=*}
  dir=${p#*=}
  [[ -f "$dir/lib/pkgconfig/ffikit.pc" ]] || { echo "run.sh: $dir/lib/pkgconfig/ffikit.pc not found" >&2; exit 2; }
  pcdir[$name]=$(cd "$dir/lib/pkgconfig" && pwd)
  order+=("$name")
done

# The TVM-FFI side, once: tvm_side.cc (its headers only; no ffikit header).
tvm_flags=(-I"$tvm_root/include")
tvm_libs=(-L"$tvm_root/lib" -Wl,-rpath,"$tvm_root/lib" -ltvm_ffi)
$CXX -std=c++17 -O2 -I"$repo_root" "${tvm_flags[@]}" -c "$here/tvm_side.cc" -o "$out/tvm_side.o"
if [[ $icount -eq 1 ]]; then
  $CXX -std=c++17 -O2 "${tvm_flags[@]}" "$here/icount_tvm.cc" -o "$out/icount_tvm" "${tvm_libs[@]}"
fi

echo "load average: $(cat /proc/loadavg)" | tee "$out/loadavg.txt"
for b in "${order[@]}"; do
  export PKG_CONFIG_PATH=${pcdir[$b]}
  # The README's way: the flags pkg-config gives, nothing else of ffikit's.
  read -r -a ffk_cflags <<<"$(pkg-config --cflags ffikit)"
  read -r -a ffk_libs <<<"$(pkg-config --libs ffikit)"
  lib=$(pkg-config --variable=libdir ffikit)/libffikit.so
  $CXX -std=c++17 -O2 -I"$repo_root" "${ffk_cflags[@]}" -c "$here/installed_bench.cc" -o "$out/installed_bench_$b.o"
  $CXX "$out/installed_bench_$b.o" "$out/tvm_side.o" -o "$out/installed_bench_$b" "${ffk_libs[@]}" \
    "${tvm_libs[@]}" -lbenchmark -lpthread
  if [[ $icount -eq 1 ]]; then
    $CC -std=c11 -O2 "${ffk_cflags[@]}" "$here/icount_ffikit.c" -o "$out/icount_ffikit_$b" "${ffk_libs[@]}"
  fi
  echo "== $b: $(readlink -f "$lib")" >&2
done

# The builds take turns, run after run, so that a change of load hits them alike.
for ((k = 1; k <= runs; ++k)); do
  for b in "${order[@]}"; do
    "$out/installed_bench_$b" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
      --benchmark_min_time=0.1 --benchmark_format=json --benchmark_out="$out/$b.$k.json" \
      --benchmark_out_format=json "${flags[@]}" >/dev/null
    echo "   run $k of $b: load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/loadavg.txt" >&2
  done
done

for b in "${order[@]}"; do
  echo
  echo "### $b ($(readlink -f "$(PKG_CONFIG_PATH=${pcdir[$b]} pkg-config --variable=libdir ffikit)/libffikit.so"))"
  echo
  files=()
  for ((k = 1; k <= runs; ++k)); do files+=("$out/$b.$k.json"); done
  python3 "$repo_root/bench/spread.py" "${files[@]}"
done

if [[ $icount -eq 1 ]]; then
  echo
  echo "### instructions per call (callgrind; bench/installed/icount.sh)"
  echo
  args=()
  for b in "${order[@]}"; do args+=("$b=$out/icount_ffikit_$b"); done
  "$here/icount.sh" "tvm_ffi=$out/icount_tvm" "${args[@]}"
fi
echo
echo "results: $out"
