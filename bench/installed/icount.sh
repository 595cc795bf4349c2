#!/usr/bin/env bash
# Instructions per call, counted by valgrind's callgrind, of the plain C drivers that
# bench/installed/run.sh --icount builds (icount_ffikit.c against an installed libffikit.so,
# icount_tvm.cc against TVM-FFI's wheel library): numbers that do not move with the load.
#
#   bench/installed/icount.sh NAME=DRIVER...     e.g. tvm_ffi=/tmp/x/icount_tvm opt=/tmp/x/icount_ffikit_opt
#
# Each case runs twice under callgrind, with N1 and N2 iterations; the difference of the
# total instruction counts over N2 - N1 is the count of one iteration: the call and the
# loop around it (packing the arguments, checking the result), with process start-up and
# the case's setup cancelled out. Prints a markdown table, one column per NAME.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: bench/installed/icount.sh NAME=DRIVER..." >&2; exit 2; }
command -v valgrind >/dev/null || { echo "icount.sh: valgrind is not installed" >&2; exit 2; }
N1=${ICOUNT_N1:-20000}
N2=${ICOUNT_N2:-120000}
cases=(call_0 call_2 call_8 typed_call_2 any_box_unbox retain_release destroy_array_1000 destroy_tree_1000)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Total instructions of DRIVER CASE N (empty when the driver has no such case).
# The destroy_ cases count only inside ffk_object_release (their loops also build).
count() {
  local only=()
  [[ $2 == destroy_* ]] && only=(--toggle-collect=ffk_object_release)
  if ! valgrind --tool=callgrind "${only[@]}" --callgrind-out-file="$tmp/cg" "$1" "$2" "$3" >"$tmp/log" 2>&1; then
    grep -q "unknown case" "$tmp/log" && return 0
    cat "$tmp/log" >&2
    exit 1
  fi
  sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$tmp/cg"
}

header="| case |"
rule="|---|"
for spec in "$@"; do header+=" ${spec%%=*} |"; rule+="---:|"; done
echo "$header"
echo "$rule"
for c in "${cases[@]}"; do
  n1=$N1 n2=$N2
  [[ $c == destroy_* ]] && n1=$((N1 / 1000)) n2=$((N2 / 1000))  # 1,000 objects an iteration
  row="| $c |"
  for spec in "$@"; do
    drv=${spec#*=}
    a=$(count "$drv" "$c" "$n1")
    if [[ -z "$a" ]]; then row+=" - |"; continue; fi
    b=$(count "$drv" "$c" "$n2")
    row+=" $(python3 -c "print(f'{($b - $a) / ($n2 - $n1):.1f}')") |"
  done
  echo "$row"
done
