#!/usr/bin/env bash
# Instruction profiles of the decode step (callgrind: perf's hardware counters are not
# available on this VM), the evidence behind docs/PERFORMANCE.md's explanations of missed
# targets. Collects only inside BenchModel::Step (not model loading or the context prefill) and
# writes the top functions per batch size to RESULTS/profile-<model>-b<batch>.txt.
#   bench/profile.sh BUILD_DIR MODEL_DIR RESULTS_DIR [BATCH...]   (default batches: 1 64)
# Note: under valgrind OpenBLAS picks its Haswell (AVX2) kernels, since valgrind does not
# emulate AVX-512; shares are indicative, not exact.
set -euo pipefail
build=$1 model=$2 results=$3
shift 3
[ $# -gt 0 ] && batches=("$@") || batches=(1 64)
name=$(basename "$model")
mkdir -p "$results"
for batch in "${batches[@]}"; do
  out=$(mktemp)
  steps=$(( batch >= 32 ? 2 : 8 ))
  valgrind --tool=callgrind --callgrind-out-file="$out" \
    --toggle-collect='slotserve::bench::BenchModel::Step*' \
    "$build/bench/slotserve-bench" --suite=decode --models="$model" --batches="$batch" \
    --context=128 --warmup=0 --repeats=1 --steps_per_repeat="$steps" >/dev/null 2>&1
  {
    echo "callgrind, $name, batch $batch, $steps decode steps (instructions inside Step only)"
    callgrind_annotate "$out" 2>/dev/null | grep -E '^ *[0-9,]+ \(' | head -16 |
      sed -E 's/\[[^]]*\]$//; s/\(slotserve::kernels::[A-Za-z]+Params const&[^)]*\)//'
  } >"$results/profile-$name-b$batch.txt"
  rm -f "$out"
  echo "profile.sh: wrote $results/profile-$name-b$batch.txt" >&2
done
