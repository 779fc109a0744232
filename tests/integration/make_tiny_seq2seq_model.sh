#!/usr/bin/env bash
# ctest fixture `tiny_seq2seq_model`: a small random-weight encoder-decoder model directory
# (ABC self-attention, ABC cross attention, sources up to 48 tokens) sharing the tiny model's
# SentencePiece tokenizer, for the integration tests of the source API.
#
#   make_tiny_seq2seq_model.sh TINY_MODEL_DIR OUT_DIR [PYTHON]
#
# Skips the work when OUT_DIR was made by this same script (a stamp holds the script's hash).
set -euo pipefail
tiny=$1
out=$2
python=${3:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
stamp=$(sha256sum "$0" | cut -d' ' -f1)
if [ -f "$out/config.json" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "make_tiny_seq2seq_model: $out is up to date"
  exit 0
fi
mkdir -p "$(dirname "$out")"
work=$(mktemp -d "$(dirname "$out")/.tiny-seq2seq.XXXXXX")
trap 'rm -rf "$work"' EXIT
PYTHONPATH="$root/python" "$python" -m slotserve_ref.make_random_seq2seq_model \
  --config '{"d_model": 64, "n_heads": 2, "d_ffn": 128,
             "encoder": {"n_layers": 1, "max_source_tokens": 48},
             "decoder": {"n_layers": 2, "attention": {"kind": "abc", "slots": 8}},
             "cross_attention": {"kind": "abc", "slots": 8}}' \
  --vocab-size 400 --seed 11 --tokenizer "$tiny/tokenizer.model" --out "$work/model"
echo "$stamp" > "$work/model/.stamp"
rm -rf "$out"
mv "$work/model" "$out"
