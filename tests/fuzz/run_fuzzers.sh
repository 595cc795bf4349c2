#!/usr/bin/env bash
# Builds the harnesses (build_fuzzers.sh) and fuzzes each for a fixed time, one after the
# other, starting from its checked-in corpus (tests/fuzz/corpus/<name>, never written to)
# and its dictionary (tests/fuzz/dict/<name>.dict) when there is one.
#   tests/fuzz/run_fuzzers.sh [SECONDS_EACH] [HARNESS...]     (default 20 s, every harness)
# New inputs go to .fuzz/corpus/<name>, crashes to .fuzz/artifacts/<name>/. Prints one
# line per harness (runs, execs/s, coverage, features) and exits 1 when one crashed.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
secs=${1:-20}
shift || true
source tests/fuzz/report.sh
out=$(tests/fuzz/build_fuzzers.sh) || { echo "fuzz: build FAILED"; exit 1; }
harnesses=${*:-$(cd tests/fuzz && ls *_fuzzer.c | sed 's/\.c$//')}
status=0
for h in $harnesses; do
  name=${h%_fuzzer}
  mkdir -p "$out/corpus/$name" "$out/artifacts/$name"
  dict=tests/fuzz/dict/$name.dict
  log=$out/$h.log
  "$out/$h" -max_total_time="$secs" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$out/artifacts/$name/" ${FUZZ_JOBS:+-jobs=$FUZZ_JOBS} \
    $([[ -f $dict ]] && echo "-dict=$dict") \
    "$out/corpus/$name" "tests/fuzz/corpus/$name" > "$log" 2>&1
  fuzz_report "fuzz $name" "$secs" $? "$log" "$out/artifacts/$name" || status=1
done
exit $status
