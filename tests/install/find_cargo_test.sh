#!/usr/bin/env bash
# scripts/find_cargo.sh and the Rust steps without a usable cargo: a cargo older than 1.77
# (Debian 12's own `cargo` package is 0.66) is refused, a new enough one is taken, and
# bindings/rust/run.sh without any says SKIPPED and reports one skipped test ("0 0 1"),
# exit status 0, instead of failing or passing silently.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$root/scripts/find_cargo.sh" ] || root="${TEST_SRCDIR:-}/${TEST_WORKSPACE:-ffikit}"
find_cargo="$root/scripts/find_cargo.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fails=$((fails + 1)); fi; }

fake() {  # fake <path> <version line>
  printf '#!/bin/sh\necho "%s"\n' "$2" > "$1"
  chmod +x "$1"
}
fake "$tmp/cargo-old" "cargo 0.66.0"
fake "$tmp/cargo-new" "cargo 1.96.0 (deb12u2)"
fake "$tmp/cargo-min" "cargo 1.77.0 (aa)"
fake "$tmp/cargo-odd" "not cargo at all"

# Nothing else to find: no rustup home, only the system PATH. /usr/bin/cargo is a candidate;
# when a new enough one is installed there, the "refused" checks cannot be made.
env_none=(env -i PATH=/usr/bin:/bin HOME=/nonexistent)
system_ok=false
"${env_none[@]}" /bin/bash "$find_cargo" >/dev/null 2>&1 && system_ok=true

check "a new enough cargo is taken" '[ "$("${env_none[@]}" FFK_CARGO="$tmp/cargo-new" /bin/bash "$find_cargo")" = "$tmp/cargo-new" ]'
check "1.77 itself is enough" '[ "$("${env_none[@]}" FFK_CARGO="$tmp/cargo-min" /bin/bash "$find_cargo")" = "$tmp/cargo-min" ]'
if ! $system_ok; then
  check "Debian's cargo 0.66 is refused" '! "${env_none[@]}" FFK_CARGO="$tmp/cargo-old" /bin/bash "$find_cargo" >/dev/null'
  check "unreadable versions are refused" '! "${env_none[@]}" FFK_CARGO="$tmp/cargo-odd" /bin/bash "$find_cargo" >/dev/null'
  out=$("${env_none[@]}" FFK_CARGO="$tmp/cargo-old" /bin/bash "$root/bindings/rust/run.sh" test 2>"$tmp/err")
  rc=$?
  check "run.sh test without a cargo reports one skipped test" '[ "$out" = "0 0 1" ] && [ $rc -eq 0 ]'
  check "run.sh says SKIPPED" 'grep -q "SKIPPED: no cargo >= 1.77" "$tmp/err"'
else
  echo "skipped: /usr/bin/cargo is new enough, so the refusal checks cannot run here"
fi
[ $fails -eq 0 ] && echo "find_cargo_test passed"
exit $fails
