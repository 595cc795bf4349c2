#!/usr/bin/env bash
# ffikit's GPU check: one prepared script for a Linux machine with an NVIDIA GPU. What it needs
# there: the driver (nvidia-smi), the CUDA toolkit (nvcc, compute-sanitizer), python3 with
# torch, cupy, numpy and pytest, and a C compiler for pip's build. What it does not need: Bazel
# (the test binaries are built beforehand, with --prepare, and copied over) or a network (pip
# builds with --no-index --no-build-isolation). Two modes:
#
#   scripts/gpu_check.sh --prepare [DIR]   here, with Bazel: `bazel build //tests/tensor:all`
#                                          (and //tests/ffi:stream_test where it exists), then
#                                          the test binaries, any shared library of the Bazel
#                                          tree they load, and a MANIFEST (commit, date, ldd)
#                                          copied to DIR (default .gpu-check, ignored by git).
#   scripts/gpu_check.sh [--prebuilt DIR] [--python PY] [--out OUT] [--budget SECONDS]
#                        [--only REGEX]    there: the checks below, every output under OUT
#                                          (default $OUT when set, else
#                                          /tmp/ffikit-gpu-check-out) and OUT/summary.txt;
#                                          --only runs just the steps whose summary name
#                                          matches (e.g. 'racecheck|bench'; the package is
#                                          built all the same), to rerun what ran out of time.
#
# So: `scripts/gpu_check.sh --prepare` on a machine with Bazel, copy the checkout with its
# .gpu-check folder to the GPU machine, run `scripts/gpu_check.sh` there, and read OUT
# (summary.txt first). Where each command has a time limit, --budget keeps the whole run
# inside it. OUT receives only text (summary.txt and one log per step; the binaries stay in
# the prepared folder), for machines that limit what can be copied back; the prepared folder
# is kept under 48 MiB (below) for those that limit what can be copied there.
#
# The run, in this order, each step under `timeout` and within one time budget (default 480 s,
# so that it ends inside a 10-minute command limit; a step that would start with under 10 s
# left is SKIPPED "out of time"), the most telling first:
#   1. env.txt: nvidia-smi, nvcc, compute-sanitizer, Python, torch and cupy versions.
#   2. In the background, while 3 runs: the package built with CUDA by pip from a fresh sdist
#      (FFIKIT_CUDA=1, --no-build-isolation --no-index --no-deps --target), twice: the release
#      build (users' wheel; the import check and the benchmark use it) and the testing build,
#      "leakcheck" (FFIKIT_TESTING=1: the suite's live-object checks are on; no path may say
#      "testing": test_cpp.py tells the runtime from libffikit_testing.so by its path).
#   3. Every prebuilt test binary once; each device test binary (cuda_*test but
#      cuda_layout_test) again with --gtest_repeat=5 --gtest_shuffle.
#   4. The import check of the release build: no libcudart in ldd, ffk_* the only exports, and
#      a CUDA tensor filled, copied to the host and read back (without a GPU: the error says no
#      driver is installed, never "built without CUDA").
#   5. The Python suite against the testing build, from outside the checkout: test_stream.py,
#      the tensor tests and test_torch_results.py.
#   6. bench/gpu, when present (bench/gpu/run.sh, else each bench/gpu/*.py), on the release
#      build, alone on the machine.
#   7. Then, side by side: the rest of the Python suite (less test_packaging.py and
#      test_cuda_build.py, which build packages and are checked on the development machine),
#      and compute-sanitizer over each device test binary: memcheck (leak check; API errors
#      not reported, the deliberate out-of-memory test makes two), then racecheck one test per
#      process (--gtest_filter), four at a time, each under a 90 s timeout (racecheck can hang
#      or fail internally on multi-threaded tests: "Internal Sanitizer Error" is listed apart
#      and not counted as a failure of ffikit).
# Without a GPU (nvidia-smi lists none) the binaries run once (their device tests skip
# visibly), the repeat, sanitizer and benchmark steps are SKIPPED with "no GPU", and the rest
# runs. OUT/summary.txt has one line per step (PASS, FAIL, TIMEOUT, SKIP; counts; log name).
# Exit status: 0 when no step FAILED or TIMED OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

mode=run
prebuilt=.gpu-check
python=${FFK_GPU_PYTHON:-python3}
out=${OUT:-/tmp/ffikit-gpu-check-out}
budget=${FFK_GPU_CHECK_BUDGET:-480}
only=
while [ $# -gt 0 ]; do
  case $1 in
    --prepare) mode=prepare; if [ $# -gt 1 ] && [ "${2#-}" = "$2" ]; then prebuilt=$2; shift; fi ;;
    --prebuilt) prebuilt=$2; shift ;;
    --python) python=$2; shift ;;
    --out) out=$2; shift ;;
    --budget) budget=$2; shift ;;
    --only) only=$2; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_check.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

log() { echo "[gpu_check] $*" >&2; }
case $prebuilt in /*) ;; *) prebuilt=$root/$prebuilt ;; esac

# ---- --prepare: here, with Bazel ----------------------------------------------------------
if [ "$mode" = prepare ]; then
  command -v bazel >/dev/null || { log "--prepare needs Bazel (run it on the development machine)"; exit 1; }
  targets=(//tests/tensor:all)
  [ -f tests/ffi/stream_test.cc ] && targets+=(//tests/ffi:stream_test)
  log "bazel build ${targets[*]}"
  bazel build "${targets[@]}" >&2 || { log "bazel build failed"; exit 1; }
  if ! grep -q 'HAS_CUDA = True' "$(bazel info output_base 2>/dev/null)/external/cuda/defs.bzl" 2>/dev/null; then
    log "WARNING: this Bazel build has no CUDA (no toolkit found): cuda_test is not among the binaries"
  fi
  rm -rf "$prebuilt"
  mkdir -p "$prebuilt/bin" "$prebuilt/lib"
  bin=$(bazel info bazel-bin 2>/dev/null)
  for dir in tests/tensor tests/ffi; do
    for f in "$bin/$dir"/*_test; do
      [ -f "$f" ] && [ -x "$f" ] || continue
      case $dir/$(basename "$f") in tests/ffi/*) [ "$(basename "$f")" = stream_test ] || continue ;; esac
      cp "$f" "$prebuilt/bin/"
    done
  done
  # Shared libraries the binaries load from Bazel's tree (a cc_test linked in dynamic mode),
  # carried beside them; system and CUDA libraries are the GPU machine's own.
  for f in "$prebuilt"/bin/*; do
    ldd "$f" 2>/dev/null | awk '$3 ~ /(bazel-out|_solib|execroot)/ {print $3}' | while read -r so; do
      cp -n "$so" "$prebuilt/lib/"
    done
  done
  # Kept small for a transfer limit (64 MiB is a common one). The host-only binaries lose their debug info
  # (half their size); the device ones keep it, for compute-sanitizer's line numbers, unless
  # the whole passes 48 MiB (symbols stay: reports still name functions).
  chmod u+w "$prebuilt"/bin/*
  for f in "$prebuilt"/bin/*; do
    case $(basename "$f") in cuda_layout_test) strip --strip-debug "$f" ;; cuda_*test) ;; *) strip --strip-debug "$f" ;; esac
  done
  if [ "$(du -sm "$prebuilt" | cut -f1)" -gt 48 ]; then
    log "over 48 MiB: stripping the device test binaries' debug info too"
    strip --strip-debug "$prebuilt"/bin/*
  fi
  {
    echo "commit: $(git rev-parse HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) by bazel build ${targets[*]}"
    for f in "$prebuilt"/bin/*; do echo "== $(basename "$f")"; ldd "$f" 2>&1; done
  } > "$prebuilt/MANIFEST"
  log "$(ls "$prebuilt/bin" | wc -l) test binaries and $(ls "$prebuilt/lib" | wc -l) libraries in $prebuilt ($(du -sh "$prebuilt" | cut -f1))"
  log "on the GPU machine, with ${prebuilt#$root/} copied beside the checkout: scripts/gpu_check.sh --prebuilt ${prebuilt#$root/}"
  exit 0
fi

# ---- the run: on the GPU machine ----------------------------------------------------------
mkdir -p "$out"
out=$(cd "$out" && pwd)
summary=$out/summary.txt
: > "$summary"
work=$(mktemp -d /tmp/ffikit-gpu-check.XXXXXX)
kill_tree() { # PID: it and its descendants, children first
  local c
  for c in $(pgrep -P "$1"); do kill_tree "$c"; done
  kill "$1" 2>/dev/null
}
cleanup() { # the background builds and steps still running, then the scratch directory
  local p
  for p in $(jobs -p); do kill_tree "$p"; done
  rm -rf "$work"
}
trap cleanup EXIT
start=$(date +%s)
deadline=$((start + budget))

# record STATUS NAME SECONDS NOTE: one line of the summary (appends are atomic: steps running
# in the background record too).
record() {
  printf '%-8s %-36s %5ss  %s\n' "$1" "$2" "$3" "$4" | tee -a "$summary" >&2
}

# The counts a log ends with: gtest's PASSED/SKIPPED/FAILED lines, or pytest's last line, or
# the log's last line.
counts_of() {
  local f=$1 c
  c=$(grep -E '^\[ +(PASSED|SKIPPED|FAILED) +\] [0-9]+ test' "$f" 2>/dev/null | sed -E 's/^\[ *([A-Z]+) *\] ([0-9]+) tests?.*/\2 \1/' | sort -u | tr '\n' ' ')
  [ -n "$c" ] || c=$(grep -E '[0-9]+ (passed|failed|skipped|error)' "$f" 2>/dev/null | tail -n 1)
  [ -n "$c" ] || c=$(tail -n 1 "$f" 2>/dev/null | cut -c1-110)
  echo "$c"
}

# step NAME LIMIT CMD...: runs CMD under timeout (LIMIT, cut to what the budget has left),
# output to OUT/NAME.log, and records PASS, FAIL (exit status) or TIMEOUT.
step() {
  local name=$1 limit=$2; shift 2
  local left=$((deadline - $(date +%s)))
  if [ -n "$only" ] && ! [[ $name =~ $only ]]; then record SKIP "$name" 0 "not selected by --only '$only'"; return 0; fi
  if [ "$left" -lt 10 ]; then record SKIP "$name" 0 "out of time (budget ${budget}s)"; return 0; fi
  [ "$limit" -le "$left" ] || limit=$left
  local t0 rc
  t0=$(date +%s)
  timeout -k 10 "$limit" "$@" > "$out/$name.log" 2>&1
  rc=$?
  local dt=$(($(date +%s) - t0)) note
  note="$(counts_of "$out/$name.log")"
  case $rc in
    0) record PASS "$name" "$dt" "$note" ;;
    124|137) record TIMEOUT "$name" "$dt" "limit ${limit}s; $note (log: $name.log)" ;;
    *) record FAIL "$name" "$dt" "exit $rc; $note (log: $name.log)" ;;
  esac
  return 0
}

# 1. The machine.
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "checkout: $(git rev-parse HEAD 2>/dev/null || echo '(no git)')"
  [ -f "$prebuilt/MANIFEST" ] && sed -n '1,2s/^/prebuilt /p' "$prebuilt/MANIFEST"
  nvidia-smi 2>&1 || echo "nvidia-smi: not available"
  command -v nvcc >/dev/null && nvcc --version 2>&1 | tail -n 2
  command -v compute-sanitizer >/dev/null && compute-sanitizer --version 2>&1 | tail -n 1
  "$python" -c 'import sys; print("python", sys.version.split()[0])' 2>&1
  for m in torch cupy numpy pytest; do
    "$python" -c "import $m; print('$m', $m.__version__)" 2>/dev/null || echo "$m: not importable"
  done
} > "$out/env.txt" 2>&1
gpu=false
if nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  gpu=true
  log "GPU: $(nvidia-smi -L | head -n 1)"
  record INFO env 0 "$(nvidia-smi -L | head -n 1)"
else
  log "no GPU (nvidia-smi lists none): the repeat, sanitizer and benchmark steps are skipped; the rest runs"
  record INFO env 0 "no GPU"
fi

# 2. The CUDA package, built in the background from one sdist, release and testing variants.
build_package() { # VARIANT TESTING
  local variant=$1 testing=$2 t0 rc
  t0=$(date +%s)
  mkdir -p "$work/src-$variant"
  tar -xzf "$work"/dist/ffikit-*.tar.gz -C "$work/src-$variant" &&
    FFIKIT_CUDA=1 FFIKIT_TESTING=$testing "$python" -m pip install -q --disable-pip-version-check \
      --no-build-isolation --no-index --no-deps --target "$work/site-$variant" "$work/src-$variant"/ffikit-*
  rc=$?
  echo "$rc $(($(date +%s) - t0))" > "$work/built-$variant"
  return $rc
}
have_sdist=false
if (cd bindings/python && "$python" setup.py -q sdist --dist-dir "$work/dist") > "$out/sdist.log" 2>&1; then
  have_sdist=true
  build_package release 0 > "$out/build-release.log" 2>&1 &
  build_package leakcheck 1 > "$out/build-leakcheck.log" 2>&1 &
else
  record FAIL sdist 0 "setup.py sdist failed (log: sdist.log)"
fi

# 3. The prebuilt C tests, once each; the device ones five times more, shuffled.
bins=$prebuilt/bin
device_bins=()
if [ -d "$bins" ] && [ -n "$(ls -A "$bins" 2>/dev/null)" ]; then
  export LD_LIBRARY_PATH="$prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  for b in "$bins"/*; do
    step "c-$(basename "$b")" 120 "$b" --gtest_color=no
    case $(basename "$b") in cuda_layout_test) ;; cuda_*test) device_bins+=("$b") ;; esac
  done
  [ -x "$bins/cuda_test" ] || record FAIL c-cuda_test 0 "no cuda_test in $bins: --prepare ran without the CUDA toolkit"
  for b in "${device_bins[@]}"; do
    if $gpu; then
      step "c-$(basename "$b")-repeat5-shuffle" 150 "$b" --gtest_color=no --gtest_repeat=5 --gtest_shuffle
    else
      record SKIP "c-$(basename "$b")-repeat5-shuffle" 0 "no GPU"
    fi
  done
else
  record SKIP c-tests 0 "no prebuilt binaries in $prebuilt: run scripts/gpu_check.sh --prepare on the development machine"
fi

# Waits for the background build of VARIANT and records it; 0 when it built.
wait_built() {
  local variant=$1 left rc dt
  while [ ! -f "$work/built-$variant" ]; do
    left=$((deadline - $(date +%s)))
    if [ "$left" -lt 10 ]; then record TIMEOUT "build-$variant" "$(($(date +%s) - start))" "out of time"; return 1; fi
    sleep 2
  done
  read -r rc dt < "$work/built-$variant"
  if [ "$rc" -eq 0 ]; then
    record PASS "build-$variant" "$dt" "FFIKIT_CUDA=1 pip install --target (log: build-$variant.log)"
  else
    record FAIL "build-$variant" "$dt" "exit $rc (log: build-$variant.log)"
  fi
  return "$rc"
}

# 4. The release build: linked as it should be, imported and used.
PROBE='
import ctypes, sys
import ffikit
site, gpu = sys.argv[1], sys.argv[2] == "true"
assert ffikit.__file__.startswith(site), ffikit.__file__
try:
    t = ffikit.empty((1000,), "float32", device="cuda")
except RuntimeError as e:
    msg = str(e)
    print("cuda allocation raised:", msg)
    assert "built without CUDA" not in msg, "the package was built without CUDA"
    assert not gpu, "a GPU is present but the allocation failed"
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        assert "no CUDA driver is installed" in msg, msg
    sys.exit(0)
t.fill_(2.5)
h = ffikit.empty((1000,), "float32")
h.copy_(t)
vals = set(memoryview(h).cast("B").cast("f"))
assert vals == {2.5}, vals
print("a CUDA tensor filled and read back on", t.device)
'
release_ok=false
testing_ok=false
if $have_sdist; then
  if wait_built release; then
    release_ok=true
    step import-release 60 bash -c '
      set -e
      echo "== ldd $1"; ldd "$1"
      if ldd "$1" | grep -q cudart; then echo "FAIL: libffikit.so needs a shared libcudart"; exit 1; fi
      extra=$(readelf --dyn-syms -W "$1" | awk "NR > 3 && \$7 != \"UND\" && \$5 != \"LOCAL\" {print \$8}" | grep -v "^ffk_" || true)
      if [ -n "$extra" ]; then echo "FAIL: exports besides ffk_*:"; echo "$extra" | head; exit 1; fi
      cd /tmp && PYTHONPATH="$2" "$3" -c "$4" "$2" "$5"' import \
      "$work/site-release/ffikit/lib/libffikit.so" "$work/site-release" "$python" "$PROBE" "$gpu"
  fi
  wait_built leakcheck && testing_ok=true
fi

# 5. The Python suite with CUDA compiled in (the testing build), run from outside the
# checkout: streams and tensors first.
tests=$root/bindings/python/tests
first=()
for f in "$tests/test_stream.py" "$tests"/test_tensor*.py "$tests/test_torch_results.py"; do
  [ -f "$f" ] && first+=("$f")
done
rest=()
for f in "$tests"/test_*.py; do
  case " ${first[*]} " in *" $f "*) continue ;; esac
  case $(basename "$f") in test_packaging.py|test_cuda_build.py) continue ;; esac
  rest+=("$f")
done
pytest_testing() { # NAME LIMIT PATHS...: the suite's files against the testing (leakcheck) build
  local name=$1 limit=$2; shift 2
  step "$name" "$limit" env -C /tmp PYTHONPATH="$work/site-leakcheck" OPENBLAS_NUM_THREADS=1 \
    "$python" -m pytest -q -p no:cacheprovider -rs --junitxml="$out/$name.xml" "$@"
}
if $testing_ok; then
  [ -f "$tests/test_stream.py" ] || log "bindings/python/tests/test_stream.py is not in this checkout"
  pytest_testing python-stream-tensor 240 "${first[@]}"
else
  record SKIP python-stream-tensor 0 "no testing build of the package"
fi

# 6. The GPU benchmark, alone on the machine.
if [ ! -d bench/gpu ]; then
  record SKIP bench-gpu 0 "no bench/gpu in this checkout"
elif ! $gpu; then
  record SKIP bench-gpu 0 "no GPU"
elif ! $release_ok; then
  record SKIP bench-gpu 0 "no release build of the package"
elif [ -x bench/gpu/run.sh ]; then
  step bench-gpu 240 env PYTHONPATH="$work/site-release" FFK_PYTHON="$python" bench/gpu/run.sh
else
  for f in bench/gpu/*.py; do
    [ -f "$f" ] || continue
    step "bench-gpu-$(basename "$f" .py)" 240 env PYTHONPATH="$work/site-release" "$python" "$f"
  done
fi

# 7. The rest of the suite (CPU-bound) beside the sanitizers (GPU-bound).
if $testing_ok; then
  pytest_testing python-rest 300 "${rest[@]}" &
  python_rest=$!
else
  record SKIP python-rest 0 "no testing build of the package"
  python_rest=
fi
# racecheck_all BINARY LIST: racecheck, one process per test of LIST, four at a time; the
# status of each in OUT/racecheck-NAME/status, the log of each that did not pass beside it.
racecheck_one() { # TEST DIR BINARY
  local log=$2/${1//\//_}.log rc
  timeout -k 5 90 compute-sanitizer --tool racecheck --error-exitcode 99 "$3" --gtest_color=no \
    --gtest_filter="$1" > "$log" 2>&1
  rc=$?
  if [ "$rc" -ne 0 ] && grep -q "Internal Sanitizer Error" "$log"; then rc=internal; fi
  echo "$rc $1" >> "$2/status"
  [ "$rc" = 0 ] && rm -f "$log"
  return 0
}
racecheck_all() {
  local dir=$1 bin=$2 list=$3
  mkdir -p "$dir"; : > "$dir/status"
  xargs -a "$list" -P 4 -I{} bash -c 'racecheck_one "$1" "$2" "$3"' racecheck {} "$dir" "$bin"
  local n bad internal
  n=$(wc -l < "$dir/status")
  bad=$(awk '$1 != "0" && $1 != "internal"' "$dir/status")
  internal=$(awk '$1 == "internal" {print $2}' "$dir/status")
  echo "racecheck: $n tests, $(printf '%s' "$bad" | grep -c .) failed (status 124: timed out)," \
    "$(printf '%s' "$internal" | grep -c .) hit an Internal Sanitizer Error${internal:+: $(echo $internal)}"
  [ -z "$bad" ] || { echo "$bad"; return 1; }
}
export -f racecheck_one racecheck_all
for b in "${device_bins[@]}"; do
  name=$(basename "$b")
  if ! $gpu; then
    record SKIP "memcheck-$name" 0 "no GPU"; record SKIP "racecheck-$name" 0 "no GPU"
  elif ! command -v compute-sanitizer >/dev/null; then
    record SKIP "memcheck-$name" 0 "compute-sanitizer not found"; record SKIP "racecheck-$name" 0 "compute-sanitizer not found"
  else
    step "memcheck-$name" 180 compute-sanitizer --tool memcheck --leak-check full --report-api-errors no \
      --error-exitcode 99 "$b" --gtest_color=no
    "$b" --gtest_list_tests --gtest_color=no 2>/dev/null |
      awk '/^[^ ]/ {suite=$1} /^  / {print suite $1}' > "$work/tests-$name"
    step "racecheck-$name" 240 bash -c 'racecheck_all "$@"' racecheck "$out/racecheck-$name" "$b" "$work/tests-$name"
  fi
done
[ -z "$python_rest" ] || wait "$python_rest"

failures=$(grep -cE '^(FAIL|TIMEOUT) ' "$summary")
total=$(($(date +%s) - start))
echo "total ${total}s; $failures step(s) failed or timed out; logs in $out" | tee -a "$summary" >&2
[ "$failures" -eq 0 ]
