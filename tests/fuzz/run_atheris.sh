#!/usr/bin/env bash
# Fuzzes the Python layer with atheris: the harnesses in bindings/python/tests/fuzz/
# (fuzz_api, fuzz_convert, fuzz_dlpack, fuzz_containers, fuzz_json_graph,
# fuzz_structural_visit; their corpora beside them,
# never written to), each for a fixed time, one after the other, like run_fuzzers.sh does for C.
#   tests/fuzz/run_atheris.sh [SECONDS_EACH] [HARNESS...]     (default 20 s, every harness)
# The extension is built for it with clang: coverage (-fsanitize=fuzzer-no-link, so
# libFuzzer is guided by the C code too, not only by ffikit's Python modules), ASan and
# UBSan, and the testing hooks (live-object counts), into .fuzz/atheris/lib; Python runs
# with atheris's ASan+libFuzzer runtime preloaded and PYTHONMALLOC=malloc so that ASan
# also sees Python's own buffers (the DLPack producer's memory). New inputs go to
# .fuzz/atheris/corpus/<name>, crashes to .fuzz/atheris/artifacts/<name>/. Prints one
# line per harness and exits 1 when one crashed. Needs atheris (scripts/bootstrap.sh
# installs it into .venv on CPython 3.11), clang and the project's venv.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
secs=${1:-20}
shift || true
source tests/fuzz/report.sh
py=${FFK_PYTHON:-$root/.venv/bin/python}
out=$root/.fuzz/atheris
src=bindings/python/tests/fuzz
if ! "$py" -c 'import atheris' 2>/dev/null; then
  echo "atheris: FAILED (atheris is not installed in $py; scripts/bootstrap.sh installs it)"
  exit 1
fi
runtime=$("$py" -c 'import atheris, os; print(os.path.join(atheris.path(), "asan_with_fuzzer.so"))')

mkdir -p "$out/lib/ffikit"
log=$out/build.log
# ASan, UBSan and coverage; the runtime comes from atheris's preloaded library, so the
# extension links none (clang -shared leaves the sanitizer symbols undefined).
if ! (cd bindings/python &&
      FFIKIT_TESTING=1 CC=clang LDSHARED="clang -shared" \
      CFLAGS="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
      "$py" setup.py -q build_ext -j "$(nproc)" --build-lib "$out/lib" --build-temp "$out/tmp") > "$log" 2>&1; then
  tail -20 "$log"
  echo "atheris: build FAILED (log $log)"
  exit 1
fi
cp bindings/python/ffikit/*.py bindings/python/ffikit/*.pyi bindings/python/ffikit/py.typed "$out/lib/ffikit/"

harnesses=${*:-$(cd $src && ls fuzz_*.py | sed 's/^fuzz_//; s/\.py$//')}
status=0
for name in $harnesses; do
  mkdir -p "$out/corpus/$name" "$out/artifacts/$name" "$src/corpus/$name"
  hlog=$out/$name.log
  PYTHONPATH="$out/lib" PYTHONMALLOC=malloc PYTHONDONTWRITEBYTECODE=1 OPENBLAS_NUM_THREADS=1 \
    LD_PRELOAD="$runtime" ASAN_OPTIONS="detect_leaks=0:abort_on_error=0" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    "$py" "$src/fuzz_$name.py" -max_total_time="$secs" -print_final_stats=1 -timeout=20 -rss_limit_mb=4096 \
      -artifact_prefix="$out/artifacts/$name/" "$out/corpus/$name" "$src/corpus/$name" > "$hlog" 2>&1
  fuzz_report "atheris $name" "$secs" $? "$hlog" "$out/artifacts/$name" || status=1
done
exit $status
