#!/usr/bin/env bash
# Installs ffikit under a temporary prefix with `bazel run //:install` and builds a C
# program against it with pkg-config, outside Bazel, once against the shared library and
# once statically, then with CMake's find_package(ffikit) (skipped, saying so, without
# cmake on PATH). Exits non-zero on any failure. FFK_RUN_UNDER prefixes the two runs of
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
# The unstable tier is installed in its own directory (each header there), and a program that
# includes it by name builds and links against the installed library.
[ -f "$prefix/include/ffikit/unstable/list.h" ] && [ -f "$prefix/include/ffikit/unstable/reflect.h" ]
{ for h in "$prefix"/include/ffikit/unstable/*.h; do echo "#include <ffikit/unstable/${h##*/}>"; done
  echo 'int main(void) { return ffk_list_stamp_address(0) != 0; }'; } > "$prefix/unstable.c"
cc -std=c11 -Wall -Wextra -Werror "$prefix/unstable.c" $(pkg-config --cflags --libs ffikit) -o "$prefix/unstable"
"$prefix/unstable"
# Static: the archive plus the libraries ffikit.pc lists as private (with their -L: the
# static CUDA runtime, in a build with CUDA, is not in the linker's default path).
cc -std=c11 tests/install/hello.c $(pkg-config --cflags ffikit) "$prefix/lib/libffikit.a" \
   $(pkg-config --static --libs ffikit | sed 's/-lffikit\b//') -o "$prefix/hello_static"
# The static program must behave exactly like the shared one (the containers' setup included).
${FFK_RUN_UNDER:-} "$prefix/hello_static" > "$prefix/static.out"
echo "$out" | diff -u - "$prefix/static.out"
# No CUDA runtime library is needed at load time: a build with CUDA links the static one
# (it loads the driver only at the first CUDA call), so both programs start without a driver.
if readelf -d "$prefix/lib/libffikit.so" "$prefix/hello_static" | grep -q 'NEEDED.*libcudart'; then
  echo "FAIL: libffikit.so or the static program needs a shared libcudart" >&2
  exit 1
fi
if grep -q cudart "$PKG_CONFIG_PATH/ffikit.pc"; then
  grep -q -- '-lcudart_static' "$PKG_CONFIG_PATH/ffikit.pc" || { echo "FAIL: ffikit.pc names a shared cudart" >&2; exit 1; }
fi
# One file under the one soname (no .so.0 link), and the program binds to it by that name.
[ ! -e "$prefix/lib/libffikit.so.0" ]
[[ "$(readelf -d "$prefix/hello")" == *"Shared library: [libffikit.so]"* ]]
# CMake: the relocatable package config, from a copy of the prefix moved elsewhere.
if command -v cmake > /dev/null; then
  moved=$(mktemp -d)
  trap 'rm -rf "$prefix" "$moved"' EXIT
  cp -a "$prefix/." "$moved/"
  mkdir "$moved/proj"
  cp tests/install/hello.c "$moved/proj/"
  cat > "$moved/proj/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(hello C)
find_package(ffikit 0.1 REQUIRED CONFIG)
add_executable(hello hello.c)
target_link_libraries(hello PRIVATE ffikit::ffikit)
CMAKE
  cmake -S "$moved/proj" -B "$moved/build" -DCMAKE_PREFIX_PATH="$moved" > "$moved/cmake.log" 2>&1 &&
    cmake --build "$moved/build" >> "$moved/cmake.log" 2>&1 || { cat "$moved/cmake.log"; exit 1; }
  LD_LIBRARY_PATH="$moved/lib" ${FFK_RUN_UNDER:-} "$moved/build/hello" | diff -u <(echo "$out") -
  echo "cmake: find_package(ffikit) builds and runs"
else
  echo "cmake: SKIPPED (no cmake on PATH)"
fi
echo "install check passed"
