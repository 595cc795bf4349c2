#!/usr/bin/env bash
# Runs the Python benchmarks (bench_ffi.py) several times and prints the report (report.py).
#
#   bench/python/run.sh [OUT_DIR] [--runs=N] [--parallel] [options for bench_ffi.py / pyperf, e.g. --fast --cases=nop3]
#   bench/python/run.sh [OUT_DIR] --bench=structural [--runs=N]   (another script of this directory;
#     --bench=enums: enum member lookup, issue 36)
#   bench/python/run.sh [OUT_DIR] --bench=bench_engines [--runs=N] [--cases=ray,dask]   (issue 26;
#     times only: `bench_engines.py --out=DIR` also measures memory and pickle sizes)
#
# Installs bench/python/requirements.txt (pyperf, apache-tvm-ffi, numpy) into the project's
# venv (.venv, made by ./setup.sh, which also installs ffikit there; FFK_PYTHON picks another
# interpreter). Each run writes OUT_DIR/runK.partI.json (default: a new directory under $TMPDIR);
# the report gives medians and their spread over the runs, and ffikit/peer ratios per run.
# --parallel starts every run at once, each split in four processes (the peers of a case
# always share one): only for a machine that is oversubscribed anyway, where it cuts the
# wall time and adds little to the noise already there. Timings are thread CPU time.
# Informational only: nothing here fails on a timing.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
python=${FFK_PYTHON:-$repo_root/.venv/bin/python}
if [[ ! -x "$python" ]]; then
  echo "run.sh: no $python; run ./setup.sh first (it makes .venv and installs ffikit)" >&2
  exit 2
fi

out=""
if [[ $# -gt 0 && "$1" != --* ]]; then
  out=$1
  shift
fi
runs=3
parallel=0
bench=bench_ffi
flags=()
for a in "$@"; do
  case "$a" in
    --runs=*) runs=${a#--runs=} ;;
    --parallel) parallel=1 ;;
    --bench=*) bench=${a#--bench=} ;;
    *) flags+=("$a") ;;
  esac
done
out=${out:-$(mktemp -d "${TMPDIR:-/tmp}/ffikit_pybench.XXXXXX")}
mkdir -p "$out"

"$python" -m pip install -q --disable-pip-version-check -r "$here/requirements.txt" >&2
"$python" -c "import ffikit" || { echo "run.sh: ffikit is not installed in $python; run ./setup.sh" >&2; exit 2; }

parts=("")  # --cases prefixes of each process of a run ("" is all)
if ((parallel)) && [[ $bench == bench_ffi ]]; then
  parts=("nop3,typed3,kw3,apply,echo,raise" "getitem,len,iter" "getkey,get[,contains" "build,append,from_dlpack,roundtrip,nop_")
fi
pids=()
for ((k = 1; k <= runs; k++)); do
  echo "[bench] run $k of $runs (load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  for i in "${!parts[@]}"; do
    rm -f "$out/run$k.part$i.json"
    "$python" "$here/$bench.py" --quiet --cases="${parts[$i]}" -o "$out/run$k.part$i.json" \
      ${flags[@]+"${flags[@]}"} >&2 &
    pids+=($!)
    ((parallel)) || wait "$!"
  done
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
((failed == 0)) || echo "[bench] $failed benchmark process(es) failed; the report shows what finished" >&2

echo "[bench] results in $out" >&2
"$python" "$here/report.py" "$out"/run*.part*.json
