#!/usr/bin/env bash
# Installs libffikit.so, libffikit.a, the public headers and ffikit.pc under PREFIX.
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
mkdir -p "$prefix/lib/pkgconfig" "$prefix/include/ffikit" "$prefix/include/dlpack"
install -m 0755 "$here/libffikit.so" "$prefix/lib/libffikit.so.0"
ln -sf libffikit.so.0 "$prefix/lib/libffikit.so"
install -m 0644 "$here/libffikit.a" "$prefix/lib/libffikit.a"
install -m 0644 "$here"/ffi/include/ffikit/*.h "$here"/containers/include/ffikit/*.h "$here"/tensor/include/ffikit/*.h \
  "$here"/include/ffikit/ffikit.h "$prefix/include/ffikit/"
install -m 0644 "$dlpack_h" "$prefix/include/dlpack/dlpack.h"
# ffikit.configured.pc.in: ffikit.pc.in with Libs.private completed by Bazel (CUDA or not).
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" "$here/ffikit.configured.pc.in" > "$prefix/lib/pkgconfig/ffikit.pc"
echo "installed ffikit under $prefix"
echo "  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig"
echo "  cc app.c \$(pkg-config --cflags --libs ffikit)"
