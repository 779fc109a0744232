#!/usr/bin/env bash
# Perplexity of the bundled models with their weights as committed (F16, which the engine
# reads exactly as the F32 values they round to), quantised to the int8 weight-only format by
# slotserve-quantize, and that int8 model with int8 activations too (--int8-activations on), on
# the test split, through the C++ engine (slotserve-perplexity, the protocol of
# scripts/evaluate-perplexity.sh). Prints a Markdown table; not run in CI.
#
#   scripts/evaluate-int8.sh [MODEL_DIR...]   (default: every decoder-only models/trained/kjv-*)
#
# Environment: BUILD_DIR (default build), DATA_DIR (default build-training/data, made by
# python/data/prepare_corpus.py when missing), WINDOW (default 256).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
DATA_DIR=${DATA_DIR:-build-training/data}
WINDOW=${WINDOW:-256}
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  for dir in models/trained/kjv-*/; do models+=("${dir%/}"); done
fi
if [ ! -f "$DATA_DIR/test.ids" ]; then
  /usr/bin/python3 python/data/prepare_corpus.py --out "$DATA_DIR" >&2
fi
cmake --build "$BUILD_DIR" --target slotserve-perplexity slotserve-quantize >&2
quantized=$(mktemp -d)
trap 'rm -rf "$quantized"' EXIT

perplexity() {
  "$BUILD_DIR/models/tools/slotserve-perplexity" --model "$1" --ids "$DATA_DIR/test.ids" \
    --window "$WINDOW" --int8-activations "${2:-off}" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["perplexity"])'
}
weight_bytes() { stat -c %s "$1/model.safetensors"; }

echo "| model | weights as committed (F16) | int8 | test ppl F16 | test ppl int8 | int8 vs F16 | test ppl int8 + int8 activations | vs F16 |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for model in "${models[@]}"; do
  name=$(basename "$model")
  "$BUILD_DIR/models/tools/slotserve-quantize" "$model" "$quantized/$name" >&2
  base=$(perplexity "$model")
  int8=$(perplexity "$quantized/$name")
  int8_activations=$(perplexity "$quantized/$name" on)
  /usr/bin/python3 - "$name" "$(weight_bytes "$model")" "$(weight_bytes "$quantized/$name")" \
    "$base" "$int8" "$int8_activations" <<'PY'
import sys
name, base_bytes, int8_bytes, base, int8, both = sys.argv[1:]
base, int8, both = float(base), float(int8), float(both)
print(f"| `{name}` | {int(base_bytes):,} B | {int(int8_bytes):,} B | {base:.3f} | {int8:.3f} | "
      f"{(int8 / base - 1) * 100:+.3f}% | {both:.3f} | {(both / base - 1) * 100:+.3f}% |")
PY
done
echo
echo "Test split (Ruth, Jonah, Mark, Philippians) scored in windows of $WINDOW tokens from an empty state, cpu backend, \`scripts/evaluate-int8.sh\`."
