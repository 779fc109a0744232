#!/usr/bin/env bash
# Part of scripts/gpu-check.sh --results-to: copies what a GPU check found into one folder of a
# few files, for a GPU machine whose only way back is such a folder (a lent machine returns a
# limited number of files from it, and a later call may find it emptied):
#   OUT/gpu-summary.md                     this run's summary (RESULTS_DIR);
#   OUT/gpu-{decode,prefill,memory}.csv    the tables this run's benchmarks wrote so far
#                                          (BUILD_DIR/gpu-results/, under the names
#                                          bench/results/ gives them), never the committed ones
#                                          of an earlier run;
#   OUT/gpu-check-logs.tar.xz              every log of the run: the test binaries' logs and
#                                          the compute-sanitizer shards' (sanitizer-logs/).
#   scripts/gpu-pack-results.sh BUILD_DIR RESULTS_DIR OUT_DIR
# Missing inputs (a run cut short) are skipped, never an error: whatever exists is delivered.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: scripts/gpu-pack-results.sh BUILD_DIR RESULTS_DIR OUT_DIR" >&2
  exit 2
fi
build=$1 results=$2 out=$3
mkdir -p "$out"
[ -f "$results/gpu-summary.md" ] && cp "$results/gpu-summary.md" "$out/"
for table in decode:decode_engine prefill:prefill_engine memory:memory; do
  source_csv=$build/gpu-results/${table#*:}.csv
  [ -f "$source_csv" ] && cp "$source_csv" "$out/gpu-${table%%:*}.csv"
done
logs=()
[ -d "$build" ] && while IFS= read -r -d '' log; do
  logs+=("${log#"$build"/}")
done < <(find "$build" -maxdepth 1 -name '*.log' -print0)
[ -d "$build/sanitizer-logs" ] && logs+=(sanitizer-logs)
if [ "${#logs[@]}" -gt 0 ]; then
  tar -C "$build" -cJf "$out/gpu-check-logs.tar.xz" "${logs[@]}"
fi
echo "gpu-pack-results: $(find "$out" -maxdepth 1 -type f | wc -l) files in $out"
