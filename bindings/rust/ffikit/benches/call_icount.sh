#!/usr/bin/env bash
# Instructions per call of the rows of benches/call.rs, counted by valgrind's callgrind:
# numbers that do not move with the load of a shared machine.
#
#   ffikit/benches/call_icount.sh [--features static] [ROW...]   (default: every row)
#
# Builds the bench (release, as `cargo bench`), then runs each ROW alone (`--icount ROW N`)
# under callgrind at N = 20,000 and N = 120,000 calls and prints (Ir(120k) - Ir(20k)) / 100k:
# the instructions of one call, with the setup (process start, Function creation, the
# sum check every run does) cancelled. Run from bindings/rust.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
features=()
if [[ "${1:-}" == --features ]]; then features=(--features "$2"); shift 2; fi
rows=("$@")
[[ ${#rows[@]} -gt 0 ]] || rows=(dyn_0 closure_0 c_fn_0 typed_0 typed_call_0 dyn_2 closure_2 c_fn_2 typed_2 typed_call_2
                                 dyn_8 closure_8 c_fn_8 typed_8 typed_call_8)
cargo bench --offline -q -p ffikit --bench call "${features[@]}" --no-run 2>/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ir() { # ROW N: the program's total instructions
  CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="valgrind --tool=callgrind --callgrind-out-file=$tmp/cg" \
    cargo bench --offline -q -p ffikit --bench call "${features[@]}" -- --icount "$1" "$2" >/dev/null 2>&1
  callgrind_annotate "$tmp/cg" | awk '/PROGRAM TOTALS/ && !done { gsub(",", "", $1); print $1; done = 1 }'
}
printf '%-14s %s\n' row "instructions per call"
for row in "${rows[@]}"; do
  a=$(ir "$row" 20000)
  b=$(ir "$row" 120000)
  printf '%-14s %.1f\n' "$row" "$(echo "($b - $a) / 100000" | bc -l)"
done
