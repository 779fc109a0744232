#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS from the committed seed corpus, writing what it finds
# into WORK_DIR (never into the committed corpus). Exit status: the fuzzer's (non-zero on a
# crash, leak, sanitizer report or timeout); a reproducer is left in WORK_DIR/artifacts/.
#   run_fuzzer.sh FUZZER SEED_CORPUS WORK_DIR SECONDS
set -euo pipefail
fuzzer=$1 seeds=$2 work=$3 seconds=$4
mkdir -p "$work/corpus" "$work/artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec "$fuzzer" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" "$seeds"
