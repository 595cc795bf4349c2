#!/usr/bin/env bash
# Installs what ffikit needs on Debian 12, idempotently, in a few seconds when all is there:
#   - the Debian packages below (apt-get, as root or through sudo), only those missing
#     (DLPack and xxHash are not among them: their headers are vendored in third_party/;
#     cmake is, so the checks of the installed CMake package config run everywhere; so is
#     ccache, through which .ci/run's pip builds share the C library's compiles);
#   - a Python virtual environment in .venv with requirements-dev.txt, made from the
#     python3 on PATH (the project's Python tools never go into the system).
#   - the distributed engines of requirements-engines.txt (Ray, Dask), test and benchmark
#     dependencies only, into the same venv; when their wheels cannot be installed (no
#     wheel for this CPython, no network), a warning, and the engine tests skip;
#   - on CPython 3.11, torch 2.13.0 (CPU, for the DLPack interop tests) and atheris (for
#     tests/fuzz/run_atheris.sh) into the same venv;
#   - apache-tvm-ffi 0.1.15 in a venv of its own, .venv-tvm (the interop peer of the JSON
#     graph tests; never imported by ffikit's suites);
#   - a cargo new enough for bindings/rust (scripts/find_cargo.sh): when there is none,
#     Debian 12's cargo-web and rustc-web (1.96 in the bookworm security archive); when that
#     fails too, a warning that the Rust steps will be skipped (bindings/rust/run.sh then
#     says so and counts them as skipped).
# Prints the venv's interpreter path on its last line (scripts use it as FFK_PYTHON).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  bazel-bootstrap build-essential pkg-config git
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-dev python3-venv
  clang libclang-rt-14-dev bindgen
  valgrind librust-proptest-dev librust-proptest+std-dev
  cmake ccache
)

log() { echo "[setup] $*" >&2; }

SUDO=""
need_root() {
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { log "need root or sudo to install: $*"; return 1; }
    SUDO=sudo
  fi
}
apt_updated=false

missing=()
for p in "${APT_PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  need_root "${missing[*]}" || exit 1
  $SUDO apt-get update -qq
  apt_updated=true
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >&2
fi

# Rust: bindings/rust needs cargo >= 1.77, Debian 12's `cargo` package is 0.66. Its
# security archive has cargo-web/rustc-web 1.96 (they install /usr/bin/cargo and
# /usr/bin/rustc, replacing Debian's old ones); rustup's cargo, when there, is used as is.
if ! scripts/find_cargo.sh >/dev/null; then
  if need_root cargo-web rustc-web; then
    $apt_updated || $SUDO apt-get update -qq || true
    candidate=$(apt-cache policy cargo-web 2>/dev/null | sed -n 's/^ *Candidate: //p')
    if [ -n "$candidate" ] && [ "$candidate" != "(none)" ]; then
      log "no cargo >= 1.77 found: installing Debian's cargo-web and rustc-web $candidate"
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq cargo-web rustc-web >&2 ||
        log "installing cargo-web/rustc-web failed"
    else
      log "apt has no cargo-web: enable Debian 12's bookworm-security archive in the apt sources"
    fi
  fi
  if cargo=$(scripts/find_cargo.sh); then
    log "Rust: using $cargo ($("$cargo" --version))"
  else
    log "WARNING: no cargo >= 1.77 (rustup's, or Debian's cargo-web): the Rust steps will be SKIPPED and counted as skipped"
  fi
fi

venv=.venv
if [ ! -x "$venv/bin/python" ]; then
  log "creating the virtual environment $venv from $(command -v python3)"
  python3 -m venv "$venv" >&2
fi
stamp="$venv/.requirements-dev.txt"
if ! cmp -s requirements-dev.txt "$stamp"; then
  log "installing Python tools into $venv: $(tr '\n' ' ' < requirements-dev.txt)"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r requirements-dev.txt >&2
  cp requirements-dev.txt "$stamp"
fi
# Ray and Dask for the engine tests (test_engines_ray.py, test_engines_dask.py) and the
# engine benchmarks: never imported by ffikit. The stamp is written only after a successful
# install, so a failed one is retried by the next run (the tests skip meanwhile).
engines_stamp="$venv/.requirements-engines.txt"
if ! cmp -s requirements-engines.txt "$engines_stamp"; then
  log "installing the engines into $venv (test dependencies): $(grep -v '^#' requirements-engines.txt | paste -sd' ')"
  if "$venv/bin/python" -m pip install -q --disable-pip-version-check -r requirements-engines.txt >&2; then
    cp requirements-engines.txt "$engines_stamp"
  else
    log "WARNING: the engines could not be installed: the Ray and Dask tests will be SKIPPED"
  fi
fi
# PyTorch for the DLPack interop tests: the CPU wheel of torch 2.13.0 lies on disk for
# Python 3.11 (an unpinned or other-version install would download gigabytes).
if [ "$("$venv/bin/python" -c 'import sys; print(sys.version_info[:2] == (3, 11))')" = True ] &&
   ! "$venv/bin/python" -c 'import torch' >/dev/null 2>&1; then
  log "installing torch==2.13.0 (CPU) into $venv for the DLPack tests"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check torch==2.13.0 >&2 ||
    log "torch could not be installed: the PyTorch DLPack tests will skip"
fi
# atheris for fuzzing the Python layer (tests/fuzz/run_atheris.sh, in .ci/run): its wheels
# bundle libFuzzer and an ASan runtime; CPython 3.11 is the one the fuzz runs use.
if [ "$("$venv/bin/python" -c 'import sys; print(sys.version_info[:2] == (3, 11))')" = True ] &&
   ! "$venv/bin/python" -c 'import atheris' >/dev/null 2>&1; then
  log "installing atheris into $venv for the Python fuzz harnesses"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check 'atheris>=2.3' >&2 ||
    log "atheris could not be installed: tests/fuzz/run_atheris.sh will fail"
fi
# apache-tvm-ffi 0.1.15, the compatibility peer, in a venv of its own (.venv-tvm): the
# JSON graph interop tests (bindings/python/tests/test_serialization.py) run its side in a
# subprocess named by FFK_TVM_FFI_PYTHON (test.sh sets it), so ffikit's own suites never
# import it. It is a test peer only, never a dependency; without it those tests skip.
tvm_venv=.venv-tvm
if ! "$tvm_venv/bin/python" -c 'import tvm_ffi.testing' >/dev/null 2>&1; then
  log "creating $tvm_venv with apache-tvm-ffi==0.1.15 (the interop peer of the JSON graph tests; pytest: tvm_ffi.testing imports it)"
  { python3 -m venv "$tvm_venv" &&
    "$tvm_venv/bin/python" -m pip install -q --disable-pip-version-check apache-tvm-ffi==0.1.15 pytest ; } >&2 ||
    log "apache-tvm-ffi could not be installed: the tvm_ffi interop tests will skip"
fi
echo "$PWD/$venv/bin/python"
