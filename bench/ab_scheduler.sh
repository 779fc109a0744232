#!/usr/bin/env bash
# A/B of two builds' in-process scheduler (the engine with its token selection, greedy,
# ignore_eos; `slotserve-bench --suite=scheduler`), side by side in one sitting: ROUNDS (9)
# interleaved rounds, CSV rows round,build,model,concurrency,steady_tokens_per_s,itl_ms_p50.
#
#   bench/ab_scheduler.sh BASE_BUILD NEW_BUILD CSV [MODEL_DIR...]
#     (default models: models/trained/kjv-abc-m32 models/trained/kjv-softmax-c512)
#   Environment: ROUNDS (9), THREADS (1), CONCURRENCY (1,8,32).
# Build the base as bench/ab_decode.sh says. Pause other work on the machine while it runs.
set -euo pipefail
base=$1 new=$2 csv=$3
shift 3
[ $# -gt 0 ] && models=("$@") || models=(models/trained/kjv-abc-m32 models/trained/kjv-softmax-c512)
model_list=$(IFS=,; echo "${models[*]}")
echo "round,build,model,concurrency,steady_tokens_per_s,itl_ms_p50" >"$csv"
for round in $(seq "${ROUNDS:-9}"); do
  for build in base new; do
    dir=$base
    [ "$build" = new ] && dir=$new
    "$dir/bench/slotserve-bench" --suite=scheduler --models="$model_list" \
      --concurrency="${CONCURRENCY:-1,8,32}" --threads="${THREADS:-1}" 2>/dev/null |
      awk -v b="$build" -v r="$round" '$3 ~ /^[0-9]+$/ && NF >= 12 {
        printf "%s,%s,%s,%s,%s,%s\n", r, b, $1, $3, $6, $10 }' >>"$csv"
  done
done
# Medians per point and the median of the per-round ratios.
/usr/bin/python3 - "$csv" <<'PY'
import csv, statistics, sys
from collections import defaultdict
runs = defaultdict(list)
for row in csv.DictReader(open(sys.argv[1])):
    runs[(row["model"], int(row["concurrency"]), row["build"])].append(
        float(row["steady_tokens_per_s"]))
print("| model | concurrency | base tok/s | new tok/s | new/base (median of rounds) |")
print("|---|---:|---:|---:|---:|")
for model, concurrency, build in sorted(runs):
    if build != "base":
        continue
    base, new = runs[(model, concurrency, "base")], runs[(model, concurrency, "new")]
    ratio = statistics.median(n / b for b, n in zip(base, new))
    print(f"| {model} | {concurrency} | {statistics.median(base):,.0f} | "
          f"{statistics.median(new):,.0f} | {ratio:.3f} |")
PY
