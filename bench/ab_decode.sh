#!/usr/bin/env bash
# A/B of two builds' decode step, side by side in one sitting: runs `slotserve-bench
# --suite=decode` from BASE_BUILD and NEW_BUILD alternately for ROUNDS rounds and prints, per model
# and batch, the median step time of each and their ratio. Every round goes to CSV.
#
#   bench/ab_decode.sh BASE_BUILD NEW_BUILD CSV [MODEL_DIR...]
#     (default models: models/trained/kjv-softmax-c512 models/trained/kjv-abc-m32)
#   Environment: ROUNDS (5), THREADS (1), BATCHES (1,8,32,64), CONTEXT (80), REPEATS (20),
#   WARMUP (untimed repeats per point, 1; builds before e2ca23f need ~30 at 2 threads),
#   BACKEND (cpu; cuda on a GPU machine), BENCH_ARGS (more flags for both sides, e.g.
#   --kv_cache_dtype=f16), BASE_ENV / NEW_ENV (VAR=value words set for that side
#   only: one build against itself with a kernel switched, e.g.
#     BACKEND=cuda BASE_ENV=SLOTSERVE_CUDA_ABC_STEP=generic bench/ab_decode.sh B B out.csv ...).
# The sides alternate which goes first in a round (base first in odd rounds), so a machine that
# warms up or slows down over a round does not favour one side.
#
# Build the base from another commit in a worktree with the same options as the new build, e.g.
#   git worktree add /tmp/base HEAD~1 && cmake -S /tmp/base -B /tmp/build-base \
#     -DCMAKE_BUILD_TYPE=Release -DSLOTSERVE_WITH_CUDA=OFF && \
#     cmake --build /tmp/build-base --target slotserve-bench
# Pause other work on the machine while it runs; the ratio is only as good as the quiet.
set -euo pipefail
base=$1 new=$2 csv=$3
shift 3
[ $# -gt 0 ] && models=("$@") || models=(models/trained/kjv-softmax-c512 models/trained/kjv-abc-m32)
model_list=$(IFS=,; echo "${models[*]}")
echo "round,build,model,batch,step_ms" >"$csv"
for round in $(seq "${ROUNDS:-5}"); do
  order="base new"
  [ $((round % 2)) = 0 ] && order="new base"
  for build in $order; do
    dir=$base side_env=${BASE_ENV:-}
    [ "$build" = new ] && dir=$new side_env=${NEW_ENV:-}
    # shellcheck disable=SC2086  # side_env and BENCH_ARGS are lists of words
    env $side_env "$dir/bench/slotserve-bench" --suite=decode --models="$model_list" \
      --backend="${BACKEND:-cpu}" --batches="${BATCHES:-1,8,32,64}" --context="${CONTEXT:-80}" \
      --threads="${THREADS:-1}" --repeats="${REPEATS:-20}" --warmup="${WARMUP:-1}" \
      ${BENCH_ARGS:-} 2>/dev/null |
      awk -v b="$build" -v r="$round" '$3 ~ /^[0-9]+$/ && $5 ~ /^[0-9.]+$/ {
        printf "%s,%s,%s,%s,%s\n", r, b, $1, $3, $5 }' >>"$csv"
  done
done
/usr/bin/python3 - "$csv" "${THREADS:-1}" "${ROUNDS:-5}" <<'EOF'
import collections, csv, statistics, sys
steps = collections.defaultdict(list)
for row in csv.DictReader(open(sys.argv[1])):
    steps[(row["model"], int(row["batch"]), row["build"])].append(float(row["step_ms"]))
print(f"Decode step ms, {sys.argv[2]} thread(s), medians of {sys.argv[3]} interleaved rounds\n")
print("| model | batch | base ms | new ms | base / new |")
print("|---|---:|---:|---:|---:|")
for model, batch in sorted({(m, b) for m, b, _ in steps}):
    base = statistics.median(steps[(model, batch, "base")])
    new = statistics.median(steps[(model, batch, "new")])
    print(f"| {model} | {batch} | {base:.3f} | {new:.3f} | ×{base / new:.2f} |")
EOF
