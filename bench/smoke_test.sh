#!/usr/bin/env bash
# ctest bench_smoke (label unit): every slotserve-bench suite once on a tiny random-weight model
# of each attention kind, then the report over the CSVs it wrote. Checks the benchmark
# machinery end to end in a few seconds; the numbers mean nothing.
#   smoke_test.sh SLOTSERVE_BENCH PYTHON WORKDIR
set -euo pipefail
bench=$1
python=$2
work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work/models" "$work/results"

PYTHONPATH="$here/../python" "$python" "$here/python/make_bench_models.py" \
  --out "$work/models" --size tiny --short-context 1024 --long-context 2048 >/dev/null
models=$work/models/abc,$work/models/rfa,$work/models/luna,$work/models/softmax
quick=(--warmup=0 --repeats=1 --steps_per_repeat=2 --out="$work/results")

"$bench" --suite=anchors --anchor_array_mib=1 --anchor_small_array_mib=1 --sgemm_shapes=8x8x8 --sgemv_shapes=8x8 "${quick[@]}"
"$bench" --suite=models --models="$models" "${quick[@]}"
"$bench" --suite=memory --models="$models" --contexts=8,64 --budgets_gib=1 "${quick[@]}"
"$bench" --suite=decode --models="$models" --batches=1,3 --context=4 "${quick[@]}"
"$bench" --suite=context --models="$models" --contexts=4,16,2000 --batch=2 "${quick[@]}"
"$bench" --suite=prefill --models="$models" --prompt_lengths=1,5,300 "${quick[@]}"
"$bench" --suite=scheduler --models="$work/models/abc" --concurrency=1,3 --prompt_tokens=3 \
  --new_tokens=4 --rounds=1 "${quick[@]}"
"$bench" --suite=scaling --models="$work/models/abc,$work/models/softmax" --threads=2 \
  --batches=1,3 --context=4 --pairs=2 --job_us=2 "${quick[@]}"
# The sampled step with a nucleus, into its own folder (the suite's CSV name is fixed).
"$bench" --suite=scaling --models="$work/models/abc" --threads=2 --batches=2 --context=4 \
  --pairs=2 --job_us=2 --sampling_temperature=0.8 --sampling_top_p=0.9 \
  "${quick[@]/--out=*/--out=$work/results-top-p}"
grep -q 'sampled t=0.8 top_p=0.9' "$work/results-top-p/thread_scaling.csv" ||
  { echo "smoke: no top-p row in the sampled scaling suite" >&2; exit 1; }

PYTHONPATH="$here/../python" "$python" "$here/python/torch_decode_bench.py" \
  --models "$work/models/abc,$work/models/softmax" --batches 1,2 --context 4 --steps-per-repeat 2 \
  --warmup 0 --repeats 1 --out "$work/results/decode_torch.csv"

for csv in anchors models memory decode_engine context_engine prefill_engine decode_scheduler \
  thread_scaling decode_torch; do
  test -s "$work/results/$csv.csv" || { echo "smoke: $csv.csv missing or empty" >&2; exit 1; }
done
# The softmax model (max_context 1024) cannot hold context 2000: that point is skipped, the
# other kinds measure it.
test "$(grep -c ',2000,' "$work/results/context_engine.csv")" = 3 ||
  { echo "smoke: context 2000 should have 3 rows (softmax skipped)" >&2; exit 1; }
# A bad flag is refused with a message naming it.
if "$bench" --suite=decode --models="$models" --batches=0 2>"$work/err.txt"; then
  echo "smoke: --batches=0 was accepted" >&2; exit 1
fi
grep -q -- "--batches" "$work/err.txt" || { echo "smoke: error does not name --batches" >&2; exit 1; }
# The scaling suite compares one thread with N: one machine row per job size, then one row per
# model and batch; on one thread it has nothing to compare and says so.
test "$(grep -c '^fma-loop' "$work/results/thread_scaling.csv")" = 1 &&
  test "$(grep -c ',[13],2,' "$work/results/thread_scaling.csv")" = 4 ||
  { echo "smoke: thread_scaling.csv should have 1 machine row and 4 model rows" >&2; exit 1; }
if "$bench" --suite=scaling --models="$work/models/abc" --threads=1 2>"$work/err.txt"; then
  echo "smoke: --suite=scaling ran on one thread" >&2; exit 1
fi
grep -q -- "--threads >= 2" "$work/err.txt" || { echo "smoke: scaling error unclear" >&2; exit 1; }
# With --sampling_temperature the model rows time the server's step (StepAndSample) and say so.
"$bench" --suite=scaling --models="$work/models/abc" --threads=2 --batches=3 --context=4 \
  --pairs=1 --job_us=2 --sampling_temperature=0.8 --warmup=0 --repeats=1 --steps_per_repeat=2 \
  --out="$work/sampled"
test "$(grep -c '^abc sampled t=0.8,abc,3,2,' "$work/sampled/thread_scaling.csv")" = 1 ||
  { echo "smoke: no sampled row in the scaling suite's CSV" >&2; exit 1; }

"$python" "$here/report/make_report.py" --results "$work/results" --no-plots >/dev/null
echo "bench smoke: ok"
