#!/usr/bin/env bash
# What users install is the release build: libffikit.so and libffikit.a (bazel run
# //:install, the benchmarks) hold no assertion, while the testing variant the Python suite
# links (bindings/python's libffikit.so) keeps them - which shows this check can fail.
set -euo pipefail
release_so=$1 release_a=$2 testing_so=$3
calls_assert() { local syms; syms=$(nm "$1" 2>/dev/null); grep -q '__assert_fail' <<< "$syms"; }
for lib in "$release_so" "$release_a"; do
  if calls_assert "$lib"; then
    echo "FAIL: $lib calls __assert_fail: the release build has assertions on" >&2
    exit 1
  fi
done
if ! calls_assert "$testing_so"; then
  echo "FAIL: $testing_so has no assertion: the testing variant lost them (or this check is blind)" >&2
  exit 1
fi
echo "release build: no assertions in $(basename "$release_so") or $(basename "$release_a"); the testing variant keeps them"
