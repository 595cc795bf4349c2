#!/usr/bin/env bash
# Builds the documentation site into docs/_build/html, warnings as errors:
#
#   scripts/build_docs.sh            the site, with the Rust crates' rustdoc under rust/
#   scripts/build_docs.sh --no-rust  without rustdoc (the Rust page's links are then absent)
#
# Needs nothing but python3 (3.10 or newer) with venv, a C compiler and Python's headers (the
# package is built for autodoc), and, for rustdoc, what bindings/rust/run.sh needs (Bazel,
# bindgen, cargo 1.77+). It makes the venv .venv-docs (docs/requirements.txt: Sphinx,
# MyST, furo, matplotlib; reinstalled when that file changes), installs this checkout's
# Python package there (`pip install ./bindings/python`, so autodoc reads these sources;
# again whenever one of them is newer than the last install),
# builds rustdoc with `bindings/rust/run.sh doc`, then runs sphinx-build -W -E.
# The examples on the pages are tested by //docs:examples_test (./test.sh), not here.
set -euo pipefail
cd "$(dirname "$0")/.."
rust=1
for a in "$@"; do
  case "$a" in
    --no-rust) rust=0 ;;
    *) echo "usage: scripts/build_docs.sh [--no-rust]" >&2; exit 2 ;;
  esac
done
venv=.venv-docs
out=docs/_build/html
log=$(mktemp); trap 'rm -f "$log"' EXIT
quiet() {  # runs a command, showing its output only when it fails
  if ! "$@" > "$log" 2>&1; then cat "$log" >&2; echo "build_docs: failed: $*" >&2; exit 1; fi
}
if [ ! -x "$venv/bin/python" ]; then
  echo "[docs] making $venv" >&2
  quiet "${FFK_DOCS_BASE_PYTHON:-python3}" -m venv "$venv"
fi
if ! cmp -s docs/requirements.txt "$venv/.requirements.txt"; then
  echo "[docs] installing docs/requirements.txt into $venv" >&2
  quiet "$venv/bin/python" -m pip install --disable-pip-version-check -r docs/requirements.txt
  cp docs/requirements.txt "$venv/.requirements.txt"
fi
# Reinstalled when a source it is built from changed since the last install (the stamp).
stamp=$venv/.ffikit-installed
sources=(bindings/python/ffikit bindings/python/src bindings/python/setup.py bindings/python/pyproject.toml
         ffi containers tensor glue testing include third_party)
if [ ! -e "$stamp" ] || [ -n "$(find "${sources[@]}" -newer "$stamp" -type f -print -quit)" ]; then
  echo "[docs] installing this checkout's Python package into $venv (for autodoc)" >&2
  # Without CUDA: the docstrings are the same, and the build is much shorter.
  FFIKIT_CUDA=0 quiet "$venv/bin/python" -m pip install --disable-pip-version-check --force-reinstall --no-deps ./bindings/python
  touch "$stamp"   # after: the build itself writes under bindings/python
fi

rm -rf docs/_build/html docs/_build/charts
if [ "$rust" = 1 ]; then
  echo "[docs] rustdoc (bindings/rust/run.sh doc)" >&2
  if bindings/rust/run.sh doc > "$log" 2>&1; then
    [ -d bindings/rust/target/doc/ffikit ] && rustdoc=bindings/rust/target/doc || rustdoc=""
  else
    cat "$log" >&2; echo "build_docs: bindings/rust/run.sh doc failed" >&2; exit 1
  fi
  [ -n "$rustdoc" ] || echo "[docs] no rustdoc (no cargo): the Rust page's links will be absent" >&2
fi

echo "[docs] sphinx-build -W" >&2
start=$(date +%s)
"$venv/bin/python" -m sphinx -W --keep-going -E -q -b html docs "$out"
if [ "$rust" = 1 ] && [ -n "${rustdoc:-}" ]; then
  cp -r "$rustdoc" "$out/rust"
fi
echo "[docs] built $out/index.html in $(( $(date +%s) - start )) s" >&2
