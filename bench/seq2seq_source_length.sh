#!/usr/bin/env bash
# Encoder-decoder decode speed and state bytes per request against the source length, one model
# per cross kind side by side (issue 12): random weights of one shape (d_model 256, 4 heads,
# d_ffn 1024, vocab 4000, 1 encoder layer, 4 decoder layers with ABC self-attention of 8 slots as
# in the ABC paper's MT setup, max_source_tokens 16384), written once under
# build-bench/seq2seq-models/; then slotserve-bench-seq2seq times batched decode steps.
#
#   bench/seq2seq_source_length.sh BUILD_DIR OUT_PREFIX [LENGTHS] [BATCH] [REPEATS]
#
# Writes OUT_PREFIX.md (the table) and OUT_PREFIX.csv. One encoder layer keeps the set-up short
# (the encoder runs once per request and does not enter the decode step being measured).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?build dir}
out=${2:?output prefix}
lengths=${3:-128,1024,4096,16384}
batch=${4:-8}
repeats=${5:-5}
models="$root/build-bench/seq2seq-models"
mkdir -p "$models"
base='"vocab_size": 4000, "d_model": 256, "n_heads": 4, "d_ffn": 1024,
  "encoder": {"n_layers": 1, "max_source_tokens": 16384},
  "decoder": {"n_layers": 4, "attention": {"kind": "abc", "slots": 8}}'
declare -A cross=(
  [softmax]='{"kind": "softmax"}'
  [abc-m32]='{"kind": "abc", "slots": 32}'
  [rfa-d32]='{"kind": "rfa", "features": 32}'
  [luna-l32]='{"kind": "luna", "length": 32}'
  [convluna-l32]='{"kind": "luna", "length": 32, "temperature": 0.5, "filter": {"op": "conv", "kernel": 4, "stride": 4}}'
  [srformer-s16]='{"kind": "srformer", "segment": 16, "target_length": 64}'
  [srformer-s64]='{"kind": "srformer", "segment": 64, "target_length": 64}'
  [srformer-s256]='{"kind": "srformer", "segment": 256, "target_length": 64}'
)
dirs=()
for name in softmax abc-m32 rfa-d32 luna-l32 convluna-l32 srformer-s16 srformer-s64 srformer-s256; do
  dir="$models/$name"
  if [ ! -f "$dir/model.safetensors" ]; then
    PYTHONPATH="$root/python" /usr/bin/python3 -m slotserve_ref.make_random_seq2seq_model \
      --config "{$base, \"cross_attention\": ${cross[$name]}}" --seed 1 --out "$dir" >/dev/null
  fi
  dirs+=("$dir")
done
list=$(IFS=,; echo "${dirs[*]}")
"$build/bench/slotserve-bench-seq2seq" --models="$list" --source_lengths="$lengths" \
  --batch="$batch" --repeats="$repeats" --csv="$out.csv" | tee "$out.md"
