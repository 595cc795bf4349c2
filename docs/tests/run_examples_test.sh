#!/bin/sh
# Runs the documentation site's examples (test_examples.py) with the interpreter given as $1,
# against the Python package Bazel built (//bindings/python:package, the testing variant).
set -eu
python=$1
shift
cd "$(dirname "$0")"
[ -f tests/test_examples.py ] || cd ..   # Bazel runs this as docs/examples_test
export PYTHONPATH="$PWD/../bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
# Under --config=asan the extension needs the sanitizer runtime preloaded into Python (as in
# bindings/python/tests/run_pytest.sh); the C examples are built with it and run as they are.
SAN=$(ldd ../bindings/python/ffikit/_core.so | awk '/lib(asan|ubsan|tsan)\.so/ {print $3}' | tr '\n' ':')
if [ -n "$SAN" ]; then
  export LD_PRELOAD="${SAN%:}"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"   # CPython itself "leaks" at exit
fi
exec "$python" -m pytest -q -p no:cacheprovider ${XML_OUTPUT_FILE:+--junitxml="$XML_OUTPUT_FILE"} "$@" tests/test_examples.py tests/test_cheaders.py
