#!/usr/bin/env bash
# Issue 16 item 1's comparison with llama.cpp, in one sitting: llama.cpp's decode (F16 and Q8_0
# weights) and slotserve's (F16, int8, int8 with int8 activations; the softmax and the ABC model)
# at the same batches and thread counts, interleaved for ROUNDS rounds, then tables of the
# median decode tokens/s and of each row's ratio to llama.cpp F16.
#
#   bench/llamacpp_sitting.sh LLAMA_BIN_DIR F16_GGUF Q8_0_GGUF CSV
#
# LLAMA_BIN_DIR holds llama.cpp's `llama-batched-bench`; the two GGUF files are a GPT-2 of the
# bundled models' shape (docs/PERFORMANCE.md, "Against llama.cpp", says how both are built; none
# of llama.cpp's code or files belongs in this repository). llama.cpp runs
# `llama-batched-bench -c 9216 -npp 16 -ntg 128 -npl BATCHES -t T`: its 128 generated tokens
# run from context 16 to 143, so slotserve runs `--suite=decode --context=80`. Its KV cache is
# F16, so the softmax model runs with `--kv_cache_dtype=f16` here.
#
# Environment: ROUNDS (5), THREADS_LIST ("1 2"), BATCHES (1,8,32,64), REPEATS (11), BUILD
# (build: slotserve-bench and slotserve-quantize), INT8_DIR (build/llamacpp-sitting: the int8
# copies of the two models, made with slotserve-quantize when missing). llama.cpp goes first in
# odd rounds and slotserve in even ones. Pause other work on the machine while it runs.
set -euo pipefail
llama_bin=$1 f16_gguf=$2 q8_gguf=$3 csv=$4
build=${BUILD:-build} int8_dir=${INT8_DIR:-build/llamacpp-sitting}
batches=${BATCHES:-1,8,32,64}
softmax=models/trained/kjv-softmax-c512 abc=models/trained/kjv-abc-m32

mkdir -p "$int8_dir"
for model in "$softmax" "$abc"; do
  out=$int8_dir/$(basename "$model")-int8
  [ -f "$out/config.json" ] || "$build/models/tools/slotserve-quantize" "$model" "$out" >/dev/null
done

# llama.cpp at THREADS: one CSV row per batch, its generation tokens/s (S_TG).
run_llama() {  # row gguf threads round
  "$llama_bin/llama-batched-bench" -m "$2" -c 9216 -npp 16 -ntg 128 -npl "$batches" -t "$3" \
    2>/dev/null | awk -F'|' -v row="$1" -v t="$3" -v r="$4" '
      $4 ~ /^ *[0-9]+ *$/ && $9 ~ /^ *[0-9.]+ *$/ {
        gsub(/ /, "", $4); gsub(/ /, "", $9); printf "%s,%s,%s,%s,%s\n", r, t, row, $4, $9 }'
}

# slotserve at THREADS: one CSV row per batch, decode tokens/s.
run_slotserve() {  # row model_dir threads round [flags...]
  local row=$1 model=$2 threads=$3 round=$4
  shift 4
  "$build/bench/slotserve-bench" --suite=decode --models="$model" --batches="$batches" \
    --context=80 --threads="$threads" --repeats="${REPEATS:-11}" "$@" 2>/dev/null |
    awk -v row="$row" -v t="$threads" -v r="$round" '$3 ~ /^[0-9]+$/ && $8 ~ /^[0-9.]+$/ {
      printf "%s,%s,%s,%s,%s\n", r, t, row, $3, $8 }'
}

run_peer() {  # threads round
  run_llama llama-f16 "$f16_gguf" "$1" "$2"
  run_llama llama-q8_0 "$q8_gguf" "$1" "$2"
}

run_ours() {  # threads round
  local f16_cache=--kv_cache_dtype=f16 int8act=--int8_activations=true
  run_slotserve softmax-f16 "$softmax" "$1" "$2" $f16_cache
  run_slotserve softmax-int8 "$int8_dir/kjv-softmax-c512-int8" "$1" "$2" $f16_cache
  run_slotserve softmax-int8act "$int8_dir/kjv-softmax-c512-int8" "$1" "$2" $f16_cache $int8act
  run_slotserve abc-f16 "$abc" "$1" "$2"
  run_slotserve abc-int8 "$int8_dir/kjv-abc-m32-int8" "$1" "$2"
  run_slotserve abc-int8act "$int8_dir/kjv-abc-m32-int8" "$1" "$2" $int8act
}

echo "round,threads,row,batch,tok_s" >"$csv"
for round in $(seq "${ROUNDS:-5}"); do
  for threads in ${THREADS_LIST:-1 2}; do
    if [ $((round % 2)) = 1 ]; then
      run_peer "$threads" "$round" >>"$csv"
      run_ours "$threads" "$round" >>"$csv"
    else
      run_ours "$threads" "$round" >>"$csv"
      run_peer "$threads" "$round" >>"$csv"
    fi
  done
done
/usr/bin/python3 bench/report/llamacpp_sitting_table.py "$csv"
