#!/usr/bin/env bash
# Decode speed of ABC's memory controls side by side (issue 18, docs/ABC_CONTROLS.md): one
# random-weight model per control at the bundled models' size (4 layers, d_model 256, 4 heads,
# d_ffn 1024, vocab 4000, 32 slots), the engine's decode step at batch 1/8/32/64 from a
# 128-token context, interleaved in one run, plus each model's state bytes per request (equal
# for every control by construction). Weights do not change the speed, so random ones serve.
#
#   bench/abc_controls.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, bench/results)
#
# Writes OUT_DIR/abc_controls_decode.csv, abc_controls_models.csv and abc_controls.md. Not run
# in CI. linformer and compressive get 1024 positions here (the trained models: 256), enough for
# every measured step; their step cost does not depend on that bound.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
out=${2:-$root/bench/results}
threads=${BENCH_THREADS:-1}
bench=$build/bench/slotserve-bench
models=$build/bench-abc-controls
export PYTHONPATH=$root/python OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
[ -x "$bench" ] || { echo "abc_controls.sh: $bench not built (-DSLOTSERVE_BUILD_BENCH=ON)" >&2; exit 2; }

declare -A CONTROLS=(
  [abc-learned-exp]='{}'
  [abc-learned-relu]='{"control": "learned", "activation": "relu"}'
  [abc-learned-sigmoid]='{"control": "learned", "activation": "sigmoid"}'
  [abc-window]='{"control": "window"}'
  [abc-linformer]='{"control": "linformer", "max_positions": 1024}'
  [abc-compressive]='{"control": "compressive", "stride": 32}'
  [abc-random]='{"control": "random", "seed": 1}'
)
order=(abc-learned-exp abc-learned-relu abc-learned-sigmoid abc-window abc-linformer
       abc-compressive abc-random)
dirs=()
for name in "${order[@]}"; do
  dir=$models/$name
  if [ ! -f "$dir/config.json" ]; then
    control=${CONTROLS[$name]}
    config=$(/usr/bin/python3 -c 'import json,sys; a={"kind":"abc","slots":32}; a.update(json.loads(sys.argv[1])); print(json.dumps({"vocab_size":4000,"d_model":256,"n_layers":4,"n_heads":4,"d_ffn":1024,"attention":a}))' "$control")
    /usr/bin/python3 -m slotserve_ref.make_random_model --config "$config" --seed 1 --out "$dir" >/dev/null
  fi
  dirs+=("$dir")
done
list=$(IFS=,; echo "${dirs[*]}")
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bench" --suite models --models "$list" --context 128 --out "$tmp/models" >/dev/null
"$bench" --suite decode --models "$list" --batches 1,8,32,64 --context 128 --threads "$threads" \
  --out "$tmp/decode"
cp "$tmp/models/"*.csv "$out/abc_controls_models.csv"
cp "$tmp/decode/"*.csv "$out/abc_controls_decode.csv"
{
  echo "# ABC memory controls: decode speed at equal state"
  echo
  echo "\`bench/abc_controls.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores, $threads compute thread(s):"
  echo "random-weight models of the bundled size (4 layers, d_model 256, 4 heads, 32 slots), the"
  echo "engine's decode step (medians of 7 repeats of 8 steps) from a 128-token context."
  echo
  /usr/bin/python3 "$root/bench/python/abc_controls_table.py" "$out/abc_controls_models.csv" \
    "$out/abc_controls_decode.csv"
} > "$out/abc_controls.md"
cat "$out/abc_controls.md"
