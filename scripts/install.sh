#!/usr/bin/env bash
# Installs the release build of ffikit under PREFIX: lib/libffikit.so, lib/libffikit.a,
# include/ffikit/*.h (and *.hpp), include/ffikit/unstable/*.h (the bindings' tier),
# include/dlpack/dlpack.h, lib/pkgconfig/ffikit.pc and
# share/cmake/ffikit/ffikitConfig{,Version}.cmake (both relocatable).
# Usage: bazel run //:install -- PREFIX      (a relative PREFIX is taken from where you ran bazel)
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: bazel run //:install -- PREFIX" >&2
  exit 2
fi
prefix=$1
case "$prefix" in /*) ;; *) prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix" ;; esac

# `bazel run` starts us in the runfiles tree, where the data files sit at their repo paths.
here="${RUNFILES_DIR:-$0.runfiles}/ffikit"
[ -d "$here" ] || here="$(cd "$(dirname "$0")" && pwd)/install.runfiles/ffikit"
dlpack_h="$here/third_party/dlpack/include/dlpack/dlpack.h"  # vendored: public headers include it

version=$(sed -n 's/^#define FFK_VERSION "\(.*\)"$/\1/p' "$here/ffi/include/ffikit/base.h")
cmakedir="$prefix/share/cmake/ffikit"
mkdir -p "$prefix/lib/pkgconfig" "$prefix/include/ffikit/unstable" "$prefix/include/dlpack" "$cmakedir"
# One file under the soname, libffikit.so (no .so.0 link): every ffikit install has the same
# soname, so a module linked against any of them binds to the copy a process already holds.
rm -f "$prefix/lib/libffikit.so.0"
install -m 0755 "$here/libffikit.so" "$prefix/lib/libffikit.so"
install -m 0644 "$here/libffikit.a" "$prefix/lib/libffikit.a"
shopt -s nullglob
install -m 0644 "$here"/ffi/include/ffikit/*.h "$here"/containers/include/ffikit/*.h "$here"/tensor/include/ffikit/*.h \
  "$here"/include/ffikit/*.h "$here"/include/ffikit/*.hpp "$prefix/include/ffikit/"
install -m 0644 "$here"/ffi/include/ffikit/unstable/*.h "$here"/containers/include/ffikit/unstable/*.h \
  "$here"/tensor/include/ffikit/unstable/*.h "$prefix/include/ffikit/unstable/"
install -m 0644 "$dlpack_h" "$prefix/include/dlpack/dlpack.h"
# The configured templates: ffikit.pc.in and ffikitConfig.cmake.in with the libraries a
# static link needs completed by Bazel (CUDA or not).
sed -e "s|@VERSION@|$version|" "$here/ffikit.configured.pc.in" > "$prefix/lib/pkgconfig/ffikit.pc"
sed -e "s|@VERSION@|$version|" "$here/ffikitConfig.configured.cmake.in" > "$cmakedir/ffikitConfig.cmake"
sed -e "s|@VERSION@|$version|" "$here/ffikitConfigVersion.configured.cmake.in" > "$cmakedir/ffikitConfigVersion.cmake"
echo "installed ffikit $version under $prefix"
echo "  pkg-config: PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs ffikit"
echo "  CMake:      cmake -DCMAKE_PREFIX_PATH=$prefix ...  (find_package(ffikit), target ffikit::ffikit)"
