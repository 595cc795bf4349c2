#!/usr/bin/env bash
# Installs ffikit under a temporary prefix with `bazel run //:install` and builds a C
# program against it with pkg-config, outside Bazel, once against the shared library and
# once statically. Exits non-zero on any failure. FFK_RUN_UNDER prefixes the two runs of
# the program (.ci/run: valgrind).
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
bazel run //:install -- "$prefix" 2>/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cc -std=c11 -Wall -Wextra -Werror tests/install/hello.c $(pkg-config --cflags --libs ffikit) -o "$prefix/hello"
out=$(${FFK_RUN_UNDER:-} "$prefix/hello")
echo "$out"
[ "$(echo "$out" | head -n 1)" = "ffikit $(pkg-config --modversion ffikit): [\"installed\", 7] ok" ]
echo "$out" | grep -qx 'tuple: (1, 2, 3)'   # the containers' setup ran
# Static: the archive plus the libraries ffikit.pc lists as private (with their -L and
# rpath: cudart, in a build with CUDA, is not in the linker's default path).
cc -std=c11 tests/install/hello.c $(pkg-config --cflags ffikit) "$prefix/lib/libffikit.a" \
   $(pkg-config --static --libs ffikit | sed 's/-lffikit\b//') -o "$prefix/hello_static"
# The static program must behave exactly like the shared one (the containers' setup included).
${FFK_RUN_UNDER:-} "$prefix/hello_static" > "$prefix/static.out"
echo "$out" | diff -u - "$prefix/static.out"
echo "install check passed"
