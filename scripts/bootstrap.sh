#!/usr/bin/env bash
# Installs what ffikit needs on Debian 12, idempotently, in a few seconds when all is there:
#   - the Debian packages below (apt-get, as root or through sudo), only those missing
#     (DLPack and xxHash are not among them: their headers are vendored in third_party/);
#   - a Python virtual environment in .venv with requirements-dev.txt, made from the
#     python3 on PATH (the project's Python tools never go into the system).
#   - on CPython 3.11, torch 2.13.0 (CPU, for the DLPack interop tests) and atheris (for
#     tests/fuzz/run_atheris.sh) into the same venv.
# Prints the venv's interpreter path on its last line (scripts use it as FFK_PYTHON).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  bazel-bootstrap build-essential pkg-config git
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-dev python3-venv
  clang libclang-rt-14-dev bindgen
  valgrind librust-proptest-dev librust-proptest+std-dev
)

log() { echo "[setup] $*" >&2; }

missing=()
for p in "${APT_PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { log "need root or sudo to install: ${missing[*]}"; exit 1; }
    SUDO=sudo
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >&2
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
echo "$PWD/$venv/bin/python"
