#!/usr/bin/env bash
# Trains the bundled Spanish→English translation models (issue 13) on the CPU and installs them
# under models/trained/<name>/ (config.json, F16 model.safetensors, tokenizer.model,
# training.json, train.log). Not run in CI. Card: models/trained/TRANSLATION_CARD.md.
#
#   scripts/train-translation-models.sh [NAME...]   (default: all, the six main models first)
#
# One recipe and one budget for every model (python/train_seq2seq.py): d_model 128, 4 heads,
# d_ffn 512, encoder 3 layers, decoder 3 layers with ABC self-attention (8 slots),
# max_source_tokens 128, the corpus's joint 8000-piece vocabulary, tied embeddings; batch 16
# verse pairs sharing one source length, STEPS steps, AdamW lr 2e-3, WARMUP warm-up steps then
# cosine decay to 0, weight decay 0.01, seed 1234, one thread. Only the cross attention differs.
# A run is deterministic (same STEPS, same weights). Resumable per model: a finished run
# (build-training/translation-runs/<name>/summary.json) is not retrained, only reinstalled, and
# an unfinished one keeps a resume point every 200 steps (resume.pt) and continues from it when
# the script is run again, to the same weights as a run never stopped (a 14,000-step model takes
# about an hour of a quiet core, so the long ones may span several sittings).
#
# Environment: STEPS (default 800), WARMUP (default 80), THREADS (default 1), DATA_DIR
# (default build-training/translation, built by scripts/make-translation-corpus.sh when
# missing), RUNS_DIR (default build-training/translation-runs).
set -euo pipefail
cd "$(dirname "$0")/.."

STEPS=${STEPS:-800}
WARMUP=${WARMUP:-80}
THREADS=${THREADS:-1}
DATA_DIR=${DATA_DIR:-build-training/translation}
RUNS_DIR=${RUNS_DIR:-build-training/translation-runs}
PYTHON=${PYTHON:-/usr/bin/python3}
# The trainer sets torch's own thread count; this keeps the BLAS/OpenMP helper pools from taking
# a second core too (two trainings side by side on 2 cores ran at half speed each without it).
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}

# name -> cross_attention JSON [extra train_seq2seq.py flags after a '|']
declare -A CROSS=(
  [es-en-softmax]='{"kind": "softmax"}'
  [es-en-abc-m32]='{"kind": "abc", "slots": 32}'
  [es-en-rfa-d32]='{"kind": "rfa", "features": 32}'
  [es-en-luna-l32]='{"kind": "luna", "length": 32}'
  [es-en-convluna-l32]='{"kind": "luna", "length": 32, "temperature": 0.5, "filter": {"op": "conv", "kernel": 4, "stride": 4}}'
  [es-en-srformer-s16]='{"kind": "srformer", "segment": 16, "target_length": 32}'
  [es-en-abc-m8]='{"kind": "abc", "slots": 8}'
  [es-en-abc-m16]='{"kind": "abc", "slots": 16}'
  [es-en-abc-m64]='{"kind": "abc", "slots": 64}'
  [es-en-srformer-s8]='{"kind": "srformer", "segment": 8, "target_length": 32}'
  [es-en-srformer-s64]='{"kind": "srformer", "segment": 64, "target_length": 32}'
  [es-en-srformer-s16-segonly]='{"kind": "srformer", "segment": 16, "target_length": 32}|--no-srformer-recurrence'
  # A second, longer budget (17.5x: 14,000 steps, 7.8 epochs), the same for every -long model:
  # the README's example and its softmax baseline first, then the other kinds and the ablations.
  [es-en-abc-m32-long]='{"kind": "abc", "slots": 32}|--steps 14000 --warmup 400'
  [es-en-softmax-long]='{"kind": "softmax"}|--steps 14000 --warmup 400'
  [es-en-rfa-d32-long]='{"kind": "rfa", "features": 32}|--steps 14000 --warmup 400'
  [es-en-luna-l32-long]='{"kind": "luna", "length": 32}|--steps 14000 --warmup 400'
  [es-en-convluna-l32-long]='{"kind": "luna", "length": 32, "temperature": 0.5, "filter": {"op": "conv", "kernel": 4, "stride": 4}}|--steps 14000 --warmup 400'
  [es-en-srformer-s16-long]='{"kind": "srformer", "segment": 16, "target_length": 32}|--steps 14000 --warmup 400'
  [es-en-abc-m8-long]='{"kind": "abc", "slots": 8}|--steps 14000 --warmup 400'
  [es-en-abc-m16-long]='{"kind": "abc", "slots": 16}|--steps 14000 --warmup 400'
  [es-en-abc-m64-long]='{"kind": "abc", "slots": 64}|--steps 14000 --warmup 400'
  [es-en-srformer-s8-long]='{"kind": "srformer", "segment": 8, "target_length": 32}|--steps 14000 --warmup 400'
  [es-en-srformer-s64-long]='{"kind": "srformer", "segment": 64, "target_length": 32}|--steps 14000 --warmup 400'
  [es-en-srformer-s16-segonly-long]='{"kind": "srformer", "segment": 16, "target_length": 32}|--no-srformer-recurrence --steps 14000 --warmup 400'
)
ALL=(es-en-softmax es-en-abc-m32 es-en-rfa-d32 es-en-luna-l32 es-en-convluna-l32
     es-en-srformer-s16 es-en-abc-m8 es-en-abc-m16 es-en-abc-m64 es-en-srformer-s8
     es-en-srformer-s64 es-en-srformer-s16-segonly es-en-abc-m32-long es-en-softmax-long
     es-en-rfa-d32-long es-en-luna-l32-long es-en-convluna-l32-long es-en-srformer-s16-long
     es-en-abc-m8-long es-en-abc-m16-long es-en-abc-m64-long es-en-srformer-s8-long
     es-en-srformer-s64-long es-en-srformer-s16-segonly-long)
names=("$@")
if [ ${#names[@]} -eq 0 ]; then names=("${ALL[@]}"); fi

if [ ! -f "$DATA_DIR/train.src.ids" ]; then
  SLOTSERVE_SKIP_INSTALL=${SLOTSERVE_SKIP_INSTALL:-0} scripts/make-translation-corpus.sh \
    --out "$DATA_DIR"
fi

for name in "${names[@]}"; do
  entry=${CROSS[$name]:-}
  if [ -z "$entry" ]; then
    echo "train-translation-models: unknown model $name (known: ${ALL[*]})" >&2
    exit 2
  fi
  cross=${entry%%|*}
  extra=()
  if [ "$entry" != "$cross" ]; then extra=(${entry#*|}); fi
  config='{"d_model": 128, "n_heads": 4, "d_ffn": 512, "embed_scale": 11.313708498984761,
    "vocab_size": 8000, "encoder": {"n_layers": 3, "max_source_tokens": 128},
    "decoder": {"n_layers": 3, "attention": {"kind": "abc", "slots": 8}},
    "cross_attention": '"$cross"'}'
  run="$RUNS_DIR/$name"
  if [ ! -f "$run/summary.json" ]; then
    "$PYTHON" python/train_seq2seq.py --source "$DATA_DIR/train.src.ids" \
      --target "$DATA_DIR/train.tgt.ids" --config "$config" --out "$run" --steps "$STEPS" \
      --batch 16 --lr 2e-3 --warmup "$WARMUP" --cosine-decay --weight-decay 0.01 --seed 1234 \
      --threads "$THREADS" --log-every 50 --resume-every 200 "${extra[@]}"
  fi
  install_dir="models/trained/$name"
  rm -rf "$install_dir"
  PYTHONPATH=python "$PYTHON" -m slotserve_ref.convert "$run/checkpoint.pt" --out "$install_dir" \
    --dtype f16 --tokenizer "$DATA_DIR/tokenizer.model"
  cp "$run/summary.json" "$install_dir/training.json"
  cp "$run/train.log" "$install_dir/train.log"
  echo "train-translation-models: installed $install_dir ($(du -sh "$install_dir" | cut -f1))"
done
