#!/usr/bin/env bash
# BLEU of the bundled Spanish→English models (issue 13) as the C++ server translates, beside
# the PyTorch reference's greedy and beam BLEU, then bench/results/translation.{md,csv,svg} (the 800-step
# models) and translation_long.{md,csv,svg} (the -long ones).
# Not run in CI (minutes per model). Card: models/trained/TRANSLATION_CARD.md.
#
#   scripts/evaluate-translation-models.sh [NAME...]   (default: every models/trained/es-en-*)
#
# Environment: SERVER (default build/server/slotserve-server), PYTHON_CLIENT (default
# build/clients/python: the built Python client package), DATA_DIR (default
# build-training/translation), EVAL_DIR (default build-training/mt-eval), LIMIT (verses, default
# 500: the first 500 of the test split), PYTORCH (1: also the PyTorch greedy and beam BLEU;
# default 1),
# SPEED_PASS (1: afterwards time every model's greedy pass again, one model after another with
# no BLEU or PyTorch work beside it, for the decode tok/s column; default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
SERVER=${SERVER:-build/server/slotserve-server}
PYTHON_CLIENT=${PYTHON_CLIENT:-build/clients/python}
DATA_DIR=${DATA_DIR:-build-training/translation}
EVAL_DIR=${EVAL_DIR:-build-training/mt-eval}
LIMIT=${LIMIT:-500}
PYTORCH=${PYTORCH:-1}
SPEED_PASS=${SPEED_PASS:-1}
PYTHON=${PYTHON:-/usr/bin/python3}

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for dir in models/trained/es-en-*/; do names+=("$(basename "$dir")"); done
fi
pytorch=()
if [ "$PYTORCH" = 1 ]; then pytorch=(--pytorch); fi
for name in "${names[@]}"; do
  PYTHONPATH="python:$PYTHON_CLIENT" OMP_NUM_THREADS=1 "$PYTHON" python/evaluate_translation.py \
    --server "$SERVER" --model "models/trained/$name" --data "$DATA_DIR" --limit "$LIMIT" \
    --beam 5 --length-penalty 1.0 --concurrency 8 --threads 1 "${pytorch[@]}" --out "$EVAL_DIR"
done
if [ "$SPEED_PASS" = 1 ]; then
  for name in "${names[@]}"; do
    PYTHONPATH="python:$PYTHON_CLIENT" OMP_NUM_THREADS=1 "$PYTHON" python/evaluate_translation.py \
      --server "$SERVER" --model "models/trained/$name" --data "$DATA_DIR" --limit "$LIMIT" \
      --concurrency 8 --threads 1 --speed-only --speed-passes 5 --out "$EVAL_DIR"
  done
fi
shopt -s nullglob
short=()
for path in "$EVAL_DIR"/es-en-*.json; do
  case $path in *-long.json | *.speed.json) ;; *) short+=("$path") ;; esac
done
if [ ${#short[@]} -gt 0 ]; then
  "$PYTHON" python/translation_report.py --eval "$EVAL_DIR" --out bench/results/translation
fi
# The -long models (the same recipe at 14,000 steps) beside their 800-step counterparts.
if compgen -G "$EVAL_DIR/es-en-*-long.json" >/dev/null; then
  "$PYTHON" python/translation_long_report.py --eval "$EVAL_DIR" \
    --short-csv bench/results/translation.csv --out bench/results/translation_long
fi
