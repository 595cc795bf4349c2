#!/bin/sh
# Runs the pytest suite of the Python package against the extension Bazel built (the
# testing variant), with the interpreter given as $1. Under --config=asan the extension
# needs the sanitizer runtime preloaded into Python.
set -eu
python=$1
shift
cd "$(dirname "$0")"
[ -d tests ] || cd ..   # Bazel runs this as bindings/python/python_test
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
SAN=$(ldd ffikit/_core.so | awk '/lib(asan|ubsan|tsan)\.so/ {print $3}' | tr '\n' ':')
if [ -n "$SAN" ]; then
  export LD_PRELOAD="${SAN%:}"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"   # CPython itself "leaks" at exit
  export FFIKIT_SANITIZED=1
fi
exec "$python" -m pytest -q -p no:cacheprovider ${XML_OUTPUT_FILE:+--junitxml="$XML_OUTPUT_FILE"} "$@" tests
