#!/usr/bin/env bash
# Test-set perplexity of every committed model under models/trained/, through the C++ engine
# (slotserve-perplexity) and the PyTorch reference (python/evaluate_pytorch.py), with
# the same windows of the same token stream; writes the table into README.md between
# <!-- perplexity-table:begin --> and <!-- perplexity-table:end --> and fails if any model's
# two perplexities differ by more than 0.5%.
#
#   scripts/evaluate-perplexity.sh [MODEL_DIR...]     (default: every models/trained/*/)
#
# Environment: BUILD_DIR (default build), DATA_DIR (default build-training/data; built with
# python/data/prepare_corpus.py when missing), WINDOW (default 256, the training sequence
# length), BACKEND (default cpu), MAX_TOKENS (default: the whole test split), README (default
# README.md; set to a copy to leave the real one alone).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
DATA_DIR=${DATA_DIR:-build-training/data}
WINDOW=${WINDOW:-256}
BACKEND=${BACKEND:-cpu}
README=${README:-README.md}
PYTHON=${PYTHON:-/usr/bin/python3}
max_tokens_flag=()
if [ -n "${MAX_TOKENS:-}" ]; then max_tokens_flag=(--max-tokens "$MAX_TOKENS"); fi

if [ $# -gt 0 ]; then
  models=("$@")
else
  models=()
  # Decoder-only models only: the translation models (slotserve-seq2seq) have their BLEU card.
  for d in models/trained/*/; do
    [ -f "$d/config.json" ] && ! grep -q '"slotserve-seq2seq"' "$d/config.json" && models+=("${d%/}")
  done
fi
if [ ${#models[@]} -eq 0 ]; then
  echo "evaluate-perplexity: no model directories (models/trained/*/config.json)" >&2
  exit 1
fi

if [ ! -f "$DATA_DIR/test.ids" ]; then
  "$PYTHON" python/data/prepare_corpus.py --out "$DATA_DIR"
fi

# Before the build: every model's tokenizer must encode like the one that made the test ids
# (same pieces, normalizer and encoding settings; a tokenizer.model also records the paths it
# was trained from, which do not count). The helper lists what differs.
for model in "${models[@]}"; do
  if ! "$PYTHON" python/tokenizer_model.py compare "$DATA_DIR/tokenizer.model" \
      "$model/tokenizer.model"; then
    echo "evaluate-perplexity: $model/tokenizer.model does not encode like" \
      "$DATA_DIR/tokenizer.model; the test ids would not be this model's tokens" \
      "(rebuild $DATA_DIR?)" >&2
    exit 1
  fi
done

if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DSLOTSERVE_BUILD_SERVER=OFF -DSLOTSERVE_BUILD_BENCH=OFF
fi
cmake --build "$BUILD_DIR" --target slotserve-perplexity
perplexity_tool="$BUILD_DIR/models/tools/slotserve-perplexity"

results=$(mktemp)
trap 'rm -f "$results"' EXIT
for model in "${models[@]}"; do
  echo "evaluate-perplexity: $model" >&2
  cpp=$("$perplexity_tool" --model "$model" --ids "$DATA_DIR/test.ids" --window "$WINDOW" \
    --backend "$BACKEND" "${max_tokens_flag[@]}")
  echo "  C++:     $cpp" >&2
  ref=$("$PYTHON" python/evaluate_pytorch.py --model "$model" --ids "$DATA_DIR/test.ids" \
    --window "$WINDOW" "${max_tokens_flag[@]}")
  echo "  PyTorch: $ref" >&2
  summary=null
  if [ -f "$model/training.json" ]; then summary=$(cat "$model/training.json"); fi
  printf '{"name": "%s", "model_dir": "%s", "cpp": %s, "pytorch": %s, "config": %s, "summary": %s}\n' \
    "$(basename "$model")" "$model" "$cpp" "$ref" "$(cat "$model/config.json")" "$summary" \
    | "$PYTHON" -c 'import json,sys; print(json.dumps(json.loads(sys.stdin.read())))' >>"$results"
done
"$PYTHON" python/evaluate_table.py "$results" --readme "$README"
