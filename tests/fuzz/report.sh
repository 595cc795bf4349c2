# Sourced by run_fuzzers.sh and run_atheris.sh: the one line each prints per harness from a
# libFuzzer log (atheris drives libFuzzer, so its logs read the same).
#   fuzz_report LABEL SECONDS RC LOG ARTIFACT_DIR    (returns RC's verdict: 0 passed, 1 failed)
fuzz_report() {
  local label=$1 secs=$2 rc=$3 log=$4 artifacts=$5 runs speed cov
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
  if [[ $rc -eq 0 ]]; then
    echo "$label: PASSED in ${secs}s, $runs runs, $speed execs/s, $cov"
    return 0
  fi
  grep -E 'ERROR|SUMMARY|Test unit written|Uncaught|check failed' "$log" | head -20
  echo "$label: FAILED (rc $rc; log $log; crash inputs in $artifacts/)"
  return 1
}
