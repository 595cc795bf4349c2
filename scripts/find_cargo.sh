#!/usr/bin/env bash
# Prints the path of a cargo new enough for bindings/rust (rust-version in its Cargo.toml
# files: 1.77), or prints nothing and exits 1. Looks, in this order, at $FFK_CARGO, the
# cargo on PATH, rustup's ~/.cargo/bin/cargo, and /usr/bin/cargo (Debian 12's cargo-web,
# 1.96 from the bookworm security archive, which scripts/bootstrap.sh installs when none
# of the others will do; Debian's own `cargo` package, 0.66, is too old).
# Every caller (bootstrap.sh, bindings/rust/run.sh) asks this script, so they agree.
set -uo pipefail
MIN_MAJOR=1
MIN_MINOR=77

new_enough() {  # "cargo 1.95.0 (f2d3ce0bd 2026-03-21)" -> 1 95
  local v major minor
  v=$("$1" --version 2>/dev/null) || return 1
  v=${v#cargo }
  major=${v%%.*}; v=${v#*.}; minor=${v%%.*}
  [[ $major =~ ^[0-9]+$ && $minor =~ ^[0-9]+$ ]] || return 1
  (( major > MIN_MAJOR || (major == MIN_MAJOR && minor >= MIN_MINOR) ))
}

for c in "${FFK_CARGO:-}" "$(command -v cargo 2>/dev/null)" "$HOME/.cargo/bin/cargo" /usr/bin/cargo; do
  if [ -n "$c" ] && [ -x "$c" ] && new_enough "$c"; then
    echo "$c"
    exit 0
  fi
done
exit 1
