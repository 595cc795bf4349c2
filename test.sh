#!/usr/bin/env bash
# The second command: runs every test suite and ends with "N passed, N failed, N skipped".
#   ./test.sh                    all suites: the C tests, the Python suite and the
#                                documentation's examples (Bazel), the install check, the
#                                Rust tests (cargo)
#   ./test.sh --config=asan      the C and Python suites under ASan+UBSan (--config=tsan:
#                                the C suites under TSan)
# Extra arguments go to `bazel test`. Exit status 0 only when nothing failed.
set -uo pipefail
cd "$(dirname "$0")"
FFK_PYTHON=$(scripts/bootstrap.sh | tail -n 1) || exit 1
export FFK_PYTHON
# The tvm_ffi interop tests run tvm_ffi's side with this interpreter (made by bootstrap).
if [ -x .venv-tvm/bin/python ] && .venv-tvm/bin/python -c 'import tvm_ffi.testing' >/dev/null 2>&1; then
  export FFK_TVM_FFI_PYTHON="$PWD/.venv-tvm/bin/python"
fi

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
sanitized=false
filters=()
for a in "$@"; do case "$a" in --config=asan) sanitized=true ;; esac; done
# CPython is not built for TSan: under --config=tsan the Python suite (tag no_tsan) sits out.
for a in "$@"; do case "$a" in --config=tsan) sanitized=true; filters=(--test_tag_filters=-no_tsan) ;; esac; done

# 1. The C suites and the Python suite through Bazel (gtest and pytest XML are counted
#    per test case).
#    --build_tests_only: the benchmarks and other binaries that no test runs are built once,
#    with -c opt, by .ci/run, not again in every configuration here.
bazel test //... --build_tests_only ${filters[@]+"${filters[@]}"} "$@" 2>&1 | tee "$logs/bazel.log"
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
