#!/usr/bin/env bash
# Int8 weights on the bundled Spanish→English models (issue 16 item 1 for the encoder–decoder
# models): each quantised by slotserve-quantize, then the test split's perplexity of the F16
# weights as committed, of the int8 copy, and of the int8 copy with --int8-activations,
# teacher-forced through the C++ engine (slotserve-perplexity --source-ids/--target-ids, cpu
# backend), as a markdown table. Each of the three is also computed by the float64 reference
# (python/evaluate_seq2seq_perplexity.py, the same protocol). The last two columns are the
# relative differences between the two: the largest over the exact forms (F16, int8), where the
# script fails above 1e-5, and the one with int8 activations, where it fails above 1e-3. That one
# is looser because rounding each input to int8 turns float32 against float64 differences into
# whole steps of the int8 grid wherever a value sits near a rounding boundary (docs/INT8.md §6).
# With BLEU=1, then the BLEU of both through the C++ server (python/evaluate_translation.py:
# greedy and beam 5 over the first LIMIT test verses, default 500) and how many verses' greedy
# ids the int8 copy keeps, as a second table.
# Not run in CI (about 45 s per model, 85 s with BLEU). Card: models/trained/TRANSLATION_CARD.md,
# "int8 weights".
#
#   scripts/evaluate-int8-translation.sh [NAME...]   (default: every models/trained/es-en-*)
#
# Environment: BUILD_DIR (build), DATA_DIR (build-training/translation; made by
# scripts/make-translation-corpus.sh when missing), SPLIT (test), KEEP_DIR (keep the int8 copies
# there instead of a temporary directory, e.g. for the BLEU of evaluate-translation-models.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
DATA_DIR=${DATA_DIR:-build-training/translation}
SPLIT=${SPLIT:-test}
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for dir in models/trained/es-en-*/; do names+=("$(basename "$dir")"); done
fi
if [ ! -f "$DATA_DIR/$SPLIT.src.ids" ]; then
  bash scripts/make-translation-corpus.sh --out "$DATA_DIR" >&2
fi
cmake --build "$BUILD_DIR" --target slotserve-quantize slotserve-perplexity >&2
if [ -n "${KEEP_DIR:-}" ]; then
  quantized=$KEEP_DIR
  mkdir -p "$quantized"
else
  quantized=$(mktemp -d)
  trap 'rm -rf "$quantized"' EXIT
fi

echo "| model | weights as committed (F16) | int8 | test ppl F16 | test ppl int8 | int8 vs F16 | test ppl int8 + int8 activations | vs F16 | engine vs reference, exact | engine vs reference, int8 activations |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
engine() {  # MODEL_DIR [--int8-activations on]
  "$BUILD_DIR/models/tools/slotserve-perplexity" --model "$1" --source-ids "$DATA_DIR/$SPLIT.src.ids" \
    --target-ids "$DATA_DIR/$SPLIT.tgt.ids" --backend cpu "${@:2}"
}
reference() {  # MODEL_DIR... [--int8-activations]
  PYTHONPATH=python /usr/bin/python3 python/evaluate_seq2seq_perplexity.py --data "$DATA_DIR" \
    --split "$SPLIT" "$@"
}
for name in "${names[@]}"; do
  rm -rf "${quantized:?}/$name"
  "$BUILD_DIR/models/tools/slotserve-quantize" "models/trained/$name" "$quantized/$name" >&2
  {
    engine "models/trained/$name"
    engine "$quantized/$name"
    engine "$quantized/$name" --int8-activations on
    reference "models/trained/$name" "$quantized/$name"
    reference --int8-activations "$quantized/$name"
  } | /usr/bin/python3 -c '
import json, os, sys
name, f16_dir, int8_dir = sys.argv[1:]
rows = [json.loads(line) for line in sys.stdin]
engine, reference = [r["perplexity"] for r in rows[:3]], [r["perplexity"] for r in rows[3:]]
if [r["tokens"] for r in rows[:3]] != [r["tokens"] for r in rows[3:]]:
    sys.exit(f"{name}: the engine and the reference scored different token counts: {rows}")
exact = max(abs(e / r - 1) for e, r in zip(engine[:2], reference[:2]))
rounded = abs(engine[2] / reference[2] - 1)
f16, int8, both = engine
size = lambda d: os.path.getsize(os.path.join(d, "model.safetensors"))
print(f"| `{name}` | {size(f16_dir):,} B | {size(int8_dir):,} B | {f16:.3f} | {int8:.3f} | "
      f"{(int8 / f16 - 1) * 100:+.3f}% | {both:.3f} | {(both / f16 - 1) * 100:+.3f}% | "
      f"{exact:.1e} | {rounded:.1e} |")
if exact > 1e-5 or rounded > 1e-3:
    sys.exit(f"{name}: engine {engine} and reference {reference} perplexities differ by "
             f"{exact:.2e} (exact) and {rounded:.2e} (int8 activations)")
' "$name" "models/trained/$name" "$quantized/$name"
done
echo
echo "The $SPLIT split ($(wc -l <"$DATA_DIR/$SPLIT.src.ids") verse pairs), every target token and its end scored teacher-forced by the C++ engine (cpu backend); the last two columns are the relative differences from the float64 reference's perplexities. \`scripts/evaluate-int8-translation.sh\`."
[ "${BLEU:-0}" = 1 ] || exit 0

cmake --build "$BUILD_DIR" --target slotserve-server slotserve_python_client >&2
eval_dir=$(mktemp -d)
limit=${LIMIT:-500}
echo
echo "| model | BLEU greedy F16 | BLEU greedy int8 | BLEU beam 5 F16 | BLEU beam 5 int8 | same greedy ids |"
echo "|---|---:|---:|---:|---:|---:|"
for name in "${names[@]}"; do
  for side in f16 int8; do
    model=models/trained/$name
    [ "$side" = int8 ] && model=$quantized/$name
    PYTHONPATH="python:$BUILD_DIR/clients/python" OMP_NUM_THREADS=1 /usr/bin/python3 \
      python/evaluate_translation.py --server "$BUILD_DIR/server/slotserve-server" \
      --model "$model" --data "$DATA_DIR" --limit "$limit" --beam 5 --length-penalty 1.0 \
      --concurrency 8 --threads 1 --out "$eval_dir/$side" >/dev/null
  done
  /usr/bin/python3 - "$name" "$eval_dir/f16/$name.json" "$eval_dir/int8/$name.json" <<'PY'
import json, sys
name, f16_path, int8_path = sys.argv[1:]
f16, int8 = (json.load(open(p)) for p in (f16_path, int8_path))
same = sum(a["greedy_ids"] == b["greedy_ids"] for a, b in zip(f16["verses"], int8["verses"]))
s, t = f16["summary"], int8["summary"]
print(f"| `{name}` | {s['bleu_greedy']:.2f} | {t['bleu_greedy']:.2f} | {s['bleu_beam']:.2f} | "
      f"{t['bleu_beam']:.2f} | {same}/{len(f16['verses'])} |")
PY
done
rm -rf "$eval_dir"
echo
echo "The first $limit verses of the $SPLIT split through the C++ server (cpu, one thread), BLEU as \`python/evaluate_translation.py\` computes it, \`BLEU=1 scripts/evaluate-int8-translation.sh\`."
