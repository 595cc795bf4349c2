#!/usr/bin/env bash
# The first command: installs what is missing (Debian packages, a Python venv), builds
# ffikit and runs the tour. Safe to run again; fast when everything is in place.
set -euo pipefail
cd "$(dirname "$0")"
FFK_PYTHON=$(scripts/bootstrap.sh | tail -n 1)
export FFK_PYTHON
echo "[setup] building ffikit" >&2
bazel build //... >&2
echo "[setup] installing the Python package into .venv (pip install ./bindings/python)" >&2
"$FFK_PYTHON" -m pip install -q --disable-pip-version-check ./bindings/python >&2
echo "[setup] running the tour (examples/tour.c, then examples/tour.py)" >&2
bazel run //examples:tour 2>/dev/null
(cd examples && "$FFK_PYTHON" tour.py)
echo "[setup] building the Rust crates and running the Rust tour (bindings/rust)" >&2
bindings/rust/run.sh build
bindings/rust/run.sh tour
