#!/usr/bin/env bash
# scripts/sanitizer-verdict.sh decides whether one compute-sanitizer run of a gtest binary passed
# (scripts/gpu-check.sh). The logs in sanitizer_logs/ are real racecheck runs of the kernel tests
# on an H200, shortened (fewer tests, three host frames per hazard):
#   racecheck_cublas_only.log  hazards only inside cuBLAS's nvjet_* GEMMs: passes;
#   racecheck_ours.log         also warp-level hazards in sampling_cuda.cu's FirstCrossing (since
#                              fixed): fails;
#   racecheck_crashed.log      racecheck's internal error under --kernel-name-exclude: the tests
#                              never finished: fails.
set -euo pipefail
root=$1
verdict=$root/scripts/sanitizer-verdict.sh
logs=$root/tests/scripts/sanitizer_logs
bash -n "$verdict"
expect() {  # expect PASS|FAIL TOOL LOG [TEXT the failure must print]
  local want=$1 tool=$2 log=$3 text=${4:-} got=PASS err
  err=$("$verdict" "$tool" "$log" 2>&1) || got=FAIL
  if [ "$got" != "$want" ]; then
    echo "sanitizer-verdict $tool $(basename "$log"): got $got, want $want: $err" >&2
    exit 1
  fi
  if [ -n "$text" ] && ! grep -qF -- "$text" <<<"$err"; then
    echo "sanitizer-verdict $tool $(basename "$log"): the failure does not say '$text': $err" >&2
    exit 1
  fi
}
expect PASS racecheck "$logs/racecheck_cublas_only.log"
expect FAIL racecheck "$logs/racecheck_ours.log" "FirstCrossing"
expect FAIL racecheck "$logs/racecheck_crashed.log" "did not all run"
# Only racecheck reads the hazard lines; any tool needs the closing line.
expect PASS memcheck "$logs/racecheck_ours.log"
expect FAIL memcheck "$logs/racecheck_crashed.log"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{ cat "$logs/racecheck_cublas_only.log"; echo "[  FAILED  ] Backends/LinearTest.X/cuda_F16"; } \
  >"$tmp/failed.log"
expect FAIL racecheck "$tmp/failed.log" "Backends/LinearTest.X/cuda_F16"
if "$verdict" racecheck "$tmp/missing.log" 2>/dev/null; then
  echo "sanitizer-verdict accepted a missing log" >&2
  exit 1
fi
echo "sanitizer-verdict: ok"
