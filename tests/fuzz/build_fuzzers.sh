#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang (-fsanitize=fuzzer,address,undefined) outside
# Bazel, whose toolchain is gcc: the library sources are compiled once, with the test hooks
# (FFK_TESTING=1) and without CUDA, into an archive every harness links.
#   tests/fuzz/build_fuzzers.sh [OUT]     (default OUT: .fuzz/ in the repository root)
# Prints the directory holding the binaries. Needs Debian's clang and libclang-rt-14-dev.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/.fuzz}
cd "$root"
CC=${CC_FUZZ:-clang}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"
CFLAGS="-std=c11 -g -O1 -fno-omit-frame-pointer -D_GNU_SOURCE -DFFK_TESTING=1 -Wall -Wextra -Wpedantic -Wshadow -Werror"
# DLPack, xxHash and yyjson come from third_party/ (the versions the library is written against).
INCLUDES="-Iffi/include -Icontainers/include -Itensor/include -Iinclude -Ithird_party/dlpack/include -Ithird_party/xxhash/include -Ithird_party/yyjson/include -Ithird_party/yyjson/src -I."
HARNESSES=$(cd tests/fuzz && ls *_fuzzer.c | sed 's/\.c$//')

mkdir -p "$out/obj"
# tensor/src/cuda*.c are CUDA-only (tensor/BUILD's CUDA_SRCS).
srcs=$(ls ffi/src/*.c containers/src/*.c tensor/src/*.c glue/src/*.c | grep -v '^tensor/src/cuda')
# Rebuild the archive when any library source or header is newer than it.
if [[ ! -f $out/libffikit_fuzz.a ]] || [[ -n $(find ffi containers tensor glue -newer "$out/libffikit_fuzz.a" \( -name '*.c' -o -name '*.h' \) -print -quit) ]]; then
  rm -f "$out"/obj/*.o
  printf '%s\n' $srcs | xargs -P "$(nproc)" -I{} sh -c \
    'o="$1/obj/$(echo "$2" | tr / _).o"; '"$CC $CFLAGS $SAN -fsanitize=fuzzer-no-link $INCLUDES"' -c "$2" -o "$o"' _ "$out" {}
  rm -f "$out/libffikit_fuzz.a"
  ar rcs "$out/libffikit_fuzz.a" "$out"/obj/*.o
fi
for h in $HARNESSES; do
  if [[ ! -x $out/$h || tests/fuzz/$h.c -nt $out/$h || tests/fuzz/fuzz_common.h -nt $out/$h || $out/libffikit_fuzz.a -nt $out/$h ]]; then
    $CC $CFLAGS $SAN -fsanitize=fuzzer $INCLUDES "tests/fuzz/$h.c" -Wl,--whole-archive "$out/libffikit_fuzz.a" -Wl,--no-whole-archive \
      -lpthread -ldl -lrt -lm -o "$out/$h"
  fi
done
echo "$out"
