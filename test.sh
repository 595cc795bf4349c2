#!/usr/bin/env bash
# The second command: runs every test suite and ends with "N passed, N failed, N skipped".
#   ./test.sh                    all suites: the C tests (Bazel), the install check, the Rust tests
#   ./test.sh --config=asan      the C tests under ASan+UBSan (likewise --config=tsan)
# Extra arguments go to `bazel test`. Exit status 0 only when nothing failed.
set -uo pipefail
cd "$(dirname "$0")"
FFK_PYTHON=$(scripts/bootstrap.sh | tail -n 1) || exit 1
export FFK_PYTHON

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
sanitized=false
for a in "$@"; do case "$a" in --config=asan|--config=tsan) sanitized=true ;; esac; done

# 1. The C suites through Bazel (gtest XML is counted per test case).
bazel test //... "$@" 2>&1 | tee "$logs/bazel.log"
"$FFK_PYTHON" scripts/summarize.py bazel "$logs/bazel.log" > "$logs/counts.bazel"

# 2. The install check: install under a temporary prefix, build a program with pkg-config.
if ! $sanitized; then
  if tests/install/install_check.sh > "$logs/install.log" 2>&1; then
    echo "install_check: PASSED"; echo "1 0 0" > "$logs/counts.install"
  else
    cat "$logs/install.log"; echo "install_check: FAILED"; echo "0 1 0" > "$logs/counts.install"
  fi
fi

# 3. The Rust workspace (bindings/rust): cargo test, counted per test case.
if ! $sanitized; then
  bindings/rust/run.sh test > "$logs/counts.rust"
fi

cat "$logs"/counts.* | "$FFK_PYTHON" scripts/summarize.py total ${FFK_COUNTS_FILE:+--append "$FFK_COUNTS_FILE"}
