#!/usr/bin/env bash
# Issue 20's scale benchmark (docs/FLA_CHECKPOINTS.md, "Serving at scale"): a random-weight
# checkpoint of fla's GSA-1.3B shape (24 layers, hidden 2048, 4 heads, 64 slots, vocab 32000) in
# fla's own layout (BF16, three shards + index), and its int8 twin from slotserve-quantize, each
# started as a real slotserve-server (start-up time, resident memory) and decoded by the engine at
# batch 1/8/32, plus state bytes per request next to a softmax model's KV cache at 2k/8k/32k.
#
#   bench/fla_scale.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, bench/results)
#
# The checkpoints (2.6 GiB + 1.3 GiB) are written under BUILD_DIR/fla-scale once and reused.
# Writes OUT_DIR/fla_scale.csv and fla_scale_table.md. Not run in CI (minutes, gigabytes).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
out=${2:-$root/bench/results}
threads=${BENCH_THREADS:-2}
work=$build/fla-scale
export PYTHONPATH=$root/python OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
for binary in server/slotserve-server bench/slotserve-bench models/tools/slotserve-quantize; do
  [ -x "$build/$binary" ] || { echo "fla_scale.sh: $build/$binary not built" >&2; exit 2; }
done
mkdir -p "$work"
if [ ! -f "$work/gsa-1.3b/model.safetensors.index.json" ]; then
  /usr/bin/python3 -m slotserve_ref.fla.make_scale_checkpoint "$work/gsa-1.3b" --shape gsa-1.3b \
    --shards 3 --dtype bf16
fi
if [ ! -f "$work/gsa-1.3b-int8/model.safetensors" ]; then
  rm -rf "$work/gsa-1.3b-int8"
  "$build/models/tools/slotserve-quantize" "$work/gsa-1.3b" "$work/gsa-1.3b-int8"
fi
/usr/bin/python3 "$root/bench/python/fla_scale.py" --build "$build" --out "$out" \
  --threads "$threads" "$work/gsa-1.3b" "$work/gsa-1.3b-int8"
