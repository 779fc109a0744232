#!/usr/bin/env bash
# Builds the default model directory slotserve-server loads when --model is not given, until
# the trained demo model exists (issue 5): a SentencePiece tokenizer trained with Debian's
# spm_train on the King James Bible (packages bible-kjv-text + bible-kjv, through
# python/data/prepare_corpus.py: vocab 4000, byte fallback) and a RANDOM-weight ABC
# model (4 layers, d_model 256, 4 heads, d_ffn 1024, 32 slots). The server and the client work
# end to end with it, but the text it generates is gibberish: the weights are untrained.
#
#   scripts/make-default-model.sh [OUT]      (default: build/default-model)
#
# Environment: DATA_DIR (tokenizer and corpus, default build-training/data; reused when it
# already holds tokenizer.model), PYTHON (default /usr/bin/python3, which has torch).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build/default-model}
data_dir=${DATA_DIR:-$root/build-training/data}
python=${PYTHON:-/usr/bin/python3}

if [ ! -f "$data_dir/tokenizer.model" ]; then
  echo "make-default-model: training the tokenizer on the KJV text into $data_dir"
  "$python" "$root/python/data/prepare_corpus.py" --out "$data_dir"
fi
# One line per piece: the model's vocabulary is exactly the tokenizer's.
vocab_size=$(wc -l < "$data_dir/tokenizer.vocab")

# Written beside the target and moved into place, so a half-written directory never looks
# like a model.
mkdir -p "$(dirname "$out")"
staging=$(mktemp -d "$(dirname "$out")/.default-model.XXXXXX")
trap 'rm -rf "$staging"' EXIT
PYTHONPATH="$root/python" "$python" -m slotserve_ref.make_random_model \
  --config '{"d_model": 256, "n_layers": 4, "n_heads": 4, "d_ffn": 1024,
             "attention": {"kind": "abc", "slots": 32}}' \
  --vocab-size "$vocab_size" --seed 1 --tokenizer "$data_dir/tokenizer.model" \
  --out "$staging/model"
rm -rf "$out"
mv "$staging/model" "$out"
echo "make-default-model: wrote $out (random weights: the text it generates is gibberish)"
