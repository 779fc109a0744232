#!/usr/bin/env bash
# ctest fixture `tiny_model`: a small random-weight ABC model directory with a real
# SentencePiece tokenizer (trained with spm_train on Genesis from Debian's bible-kjv-text, 400
# pieces, byte fallback) for the integration and deploy tests. Small so that it builds in a few
# seconds and a server on it decodes thousands of tokens per second on one core.
#
#   make_tiny_model.sh OUT_DIR [PYTHON]
#
# Skips the work when OUT_DIR was made by this same script (a stamp holds the script's hash).
set -euo pipefail
out=$1
python=${2:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
stamp=$(sha256sum "$0" | cut -d' ' -f1)
if [ -f "$out/config.json" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "make_tiny_model: $out is up to date"
  exit 0
fi
for tool in bible spm_train; do
  if ! command -v "$tool" >/dev/null; then
    echo "make_tiny_model: $tool is missing; run scripts/install-deps.sh" >&2
    exit 1
  fi
done

mkdir -p "$(dirname "$out")"
work=$(mktemp -d "$(dirname "$out")/.tiny-model.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Verse lines of Genesis without their numbers.
bible -l1000000 'Gen1:1-Gen50:26' | sed -n 's/^ *[0-9][0-9]* //p' > "$work/genesis.txt"
spm_train --input="$work/genesis.txt" --model_prefix="$work/tokenizer" --vocab_size=400 \
  --model_type=unigram --character_coverage=1.0 --byte_fallback=true --unk_id=0 --bos_id=1 \
  --eos_id=2 --pad_id=-1 --num_threads=1 --minloglevel=2 >/dev/null
PYTHONPATH="$root/python" "$python" -m slotserve_ref.make_random_model \
  --config '{"d_model": 64, "n_layers": 2, "n_heads": 2, "d_ffn": 128,
             "attention": {"kind": "abc", "slots": 8}}' \
  --vocab-size 400 --seed 7 --tokenizer "$work/tokenizer.model" --out "$work/model"
echo "$stamp" > "$work/model/.stamp"
rm -rf "$out"
mv "$work/model" "$out"
