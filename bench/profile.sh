#!/usr/bin/env bash
# Profiles of the decode step, the evidence behind docs/PERFORMANCE.md's explanations of missed
# targets. Writes the top functions per batch size to RESULTS/profile-<tool>-<model>-b<batch>.txt.
#   bench/profile.sh BUILD_DIR MODEL_DIR RESULTS_DIR [BATCH...]   (default batches: 1 64)
#   PROFILER=perf (default): time samples with the software clock (`perf record -e cpu-clock`;
#     this VM exposes no hardware counters). The run includes model loading and an 8-token
#     prefill, a few percent of the samples.
#   PROFILER=callgrind: instruction counts inside BenchModel::Step only. Under valgrind
#     OpenBLAS picks its Haswell (AVX2) kernels, since valgrind does not emulate AVX-512.
set -eu  # no pipefail: `head` closing the report pipes is expected
build=$1 model=$2 results=$3
shift 3
[ $# -gt 0 ] && batches=("$@") || batches=(1 64)
profiler=${PROFILER:-perf}
name=$(basename "$model")
bench=("$build/bench/slotserve-bench" --suite=decode --models="$model" --context=8)
export OPENBLAS_NUM_THREADS=1  # otherwise idle OpenBLAS workers show up spinning in sched_yield
mkdir -p "$results"
for batch in "${batches[@]}"; do
  out=$(mktemp)
  report=$results/profile-$profiler-$name-b$batch.txt
  if [ "$profiler" = perf ]; then
    perf record -q -e cpu-clock -F 4000 -o "$out" "${bench[@]}" --batches="$batch" --warmup=3 \
      --repeats=15 --steps_per_repeat=8 >/dev/null 2>&1
    {
      echo "perf cpu-clock samples, $name, batch $batch, 128 decode steps (+ load and prefill)"
      perf report -i "$out" --no-children --sort symbol 2>/dev/null | grep -v '^#' |
        grep -v '^$' | head -16 | cut -c1-100 | sed -E 's/ +$//'
    } >"$report"
  else
    steps=$(( batch >= 32 ? 2 : 8 ))
    valgrind --tool=callgrind --callgrind-out-file="$out" \
      --toggle-collect='slotserve::bench::BenchModel::Step*' \
      "${bench[@]}" --batches="$batch" --warmup=0 --repeats=1 --steps_per_repeat="$steps" \
      >/dev/null 2>&1
    {
      echo "callgrind, $name, batch $batch, $steps decode steps (instructions inside Step only)"
      callgrind_annotate "$out" 2>/dev/null | grep -E '^ *[0-9,]+ \(' | head -16 |
        sed -E 's/ \[[^]]*\]$//' | cut -c1-150
    } >"$report"
  fi
  rm -f "$out"
  echo "profile.sh: wrote $report" >&2
done
