#!/usr/bin/env bash
# Builds slotserve in Release and runs every benchmark (issue 6), side by side in one run:
# machine anchors (memory bandwidth, sgemm FLOP/s), the engine-only suites (decode vs batch,
# latency vs context, prefill, memory), the in-process scheduler, the PyTorch reference and,
# when the server and a load generator are built, end-to-end gRPC serving. Prints the tables
# and writes CSV, PNG plots and summary.md into bench/results/.
#
#   scripts/bench.sh            full run (about 10-15 minutes on 2 cores)
#   BENCH_QUICK=1 scripts/bench.sh   tiny sweeps, to check the machinery (about a minute)
#
# Environment: BENCH_THREADS (default 1: OpenBLAS, PyTorch and the bandwidth test all use it),
# BENCH_BUILD (default build-bench), BENCH_RESULTS (default bench/results),
# BENCH_SKIP (space-separated suites to skip: anchors models memory decode context prefill
# scheduler torch e2e).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BENCH_BUILD:-$root/build-bench}
results=${BENCH_RESULTS:-$root/bench/results}
threads=${BENCH_THREADS:-1}
quick=${BENCH_QUICK:-0}
skip=" ${BENCH_SKIP:-} "
python=/usr/bin/python3
cores=$(grep -c ^processor /proc/cpuinfo)  # not nproc: it follows OMP_NUM_THREADS, set below
export OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}

log() { echo "bench.sh: $*" >&2; }
wanted() { [[ "$skip" != *" $1 "* ]]; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# --- build -----------------------------------------------------------------------------------
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLOTSERVE_WITH_CUDA=OFF \
  -DSLOTSERVE_BUILD_BENCH=ON >/dev/null
targets=(slotserve-bench)
if grep -q '^SLOTSERVE_BUILD_SERVER:BOOL=ON' "$build/CMakeCache.txt" && wanted e2e; then
  targets+=(slotserve-server)
  [ -f "$root/bench/loadgen/loadgen_main.cc" ] && targets+=(slotserve-bench-loadgen)
fi
log "building ${targets[*]} (Release) in $build"
cmake --build "$build" -j"$cores" --target "${targets[@]}"
bench_bin=$build/bench/slotserve-bench

# --- models ----------------------------------------------------------------------------------
models_dir=$build/bench-models
if [ "$quick" = 1 ]; then
  models_dir=$build/bench-models-quick
  "$python" "$root/bench/python/make_bench_models.py" --out "$models_dir" --size tiny \
    --short-context 512 --long-context 2112
else
  "$python" "$root/bench/python/make_bench_models.py" --out "$models_dir" --size bundled
fi
m() { local IFS=,; local out=(); for name in "$@"; do out+=("$models_dir/$name"); done; echo "${out[*]}"; }
short_models=$(m abc rfa luna softmax)
long_models=$(m abc rfa luna softmax-long)

# --- sweeps ----------------------------------------------------------------------------------
if [ "$quick" = 1 ]; then
  plan=(--warmup=1 --repeats=3 --steps_per_repeat=4)
  batches=1,4,32
  contexts=128,512,2048
  prompts=16,256
  concurrency=1,8
  new_tokens=16
  torch_batches=1,4
  sgemm_shapes=256x256x256,64x1024x256
else
  plan=(--warmup=1 --repeats=7 --steps_per_repeat=8)
  batches=1,2,4,8,16,32,64,128,256
  contexts=128,256,512,1024,2048,4096,8192,16384
  prompts=16,64,256,1024,4096
  concurrency=1,8,32,64
  new_tokens=64
  torch_batches=1,8,64  # the reference's softmax step clones its whole cache: 3 s at 256
  sgemm_shapes=1024x1024x1024,64x1024x256,64x4000x256,1x1024x256,1x4000x256
fi

mkdir -p "$results"
# Only this run's own tables and plots: bench/results also keeps the CSVs of other sittings
# (thread scaling, int8 routing, llama.cpp, GPU runs), which a run must not delete.
for name in anchors models memory decode_engine decode_grpc serving_grpc decode_torch \
  decode_scheduler context_engine prefill_engine; do
  rm -f "$results/$name.csv"
done
for name in decode_throughput context_latency memory_per_request prefill_ttft serving_ttft; do
  rm -f "$results/$name.png"
done
loads=$results/loads.csv
echo "suite,load1_before,load1_after,seconds" >"$loads"
run_suite() {  # run_suite NAME COMMAND...: runs it, recording the load average around it
  local name=$1; shift
  wanted "$name" || { log "skipping $name"; return 0; }
  local before start
  before=$(load1); start=$(date +%s)
  log "suite $name (load $before)"
  # A failing suite is reported and skipped, so the others still produce their tables.
  "$@" || log "suite $name FAILED (exit status $?); its tables are missing or partial"
  echo "$name,$before,$(load1),$(( $(date +%s) - start ))" >>"$loads"
}

common=(--threads="$threads" --out="$results")
# Order: the suites whose results are compared with each other for the targets run back to
# back (anchors, engine decode, gRPC, PyTorch), so that load from elsewhere on a shared machine
# hits them alike.
run_suite anchors "$bench_bin" --suite=anchors --sgemm_shapes="$sgemm_shapes" "${common[@]}" "${plan[@]}"
run_suite models "$bench_bin" --suite=models --models="$short_models,$models_dir/softmax-long" "${common[@]}"
run_suite memory "$bench_bin" --suite=memory --models="$short_models" --contexts="$contexts" \
  --budgets_gib=1,16 "${common[@]}"
run_suite decode "$bench_bin" --suite=decode --models="$short_models" --batches="$batches" \
  --context=128 "${common[@]}" "${plan[@]}"
if [ -x "$build/server/slotserve-server" ] && [ -x "$build/bench/slotserve-bench-loadgen" ]; then
  run_suite e2e "$root/bench/e2e.sh" "$build" "$models_dir" "$results" "$threads" "$quick"
else
  log "no slotserve-server or slotserve-bench-loadgen in $build: end-to-end gRPC suite skipped"
fi
run_suite torch "$python" "$root/bench/python/torch_decode_bench.py" --models="$short_models" \
  --batches="$torch_batches" --context=128 --threads="$threads" --steps-per-repeat=4 --warmup=1 \
  --repeats=5 --out="$results/decode_torch.csv"
run_suite scheduler "$bench_bin" --suite=scheduler --models="$short_models" \
  --concurrency="$concurrency" --prompt_tokens=16 --new_tokens="$new_tokens" --rounds=3 "${common[@]}"
run_suite context "$bench_bin" --suite=context --models="$long_models" --contexts="$contexts" \
  --batch=1 "${common[@]}" "${plan[@]}"
run_suite prefill "$bench_bin" --suite=prefill --models="$long_models" --prompt_lengths="$prompts" \
  "${common[@]}" --warmup=1 --repeats=5

# --- machine and report ----------------------------------------------------------------------
{
  echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "git_commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
  echo "cores=$cores"
  echo "memory_gib=$(awk '/MemTotal/ {printf "%.1f", $2 / 1048576}' /proc/meminfo)"
  echo "kernel=$(uname -r)"
  echo "compiler=$(c++ --version | head -1)"
  echo "torch=$("$python" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo none)"
  echo "openblas=$(dpkg-query -W -f='${Version}' libopenblas0-pthread 2>/dev/null || echo unknown)"
  echo "threads=$threads"
  echo "quick=$quick"
  echo "command=BENCH_THREADS=$threads${BENCH_QUICK:+ BENCH_QUICK=$BENCH_QUICK} scripts/bench.sh"
} >"$results/machine.txt"
plots=()
command -v gnuplot >/dev/null || { plots=(--no-plots); log "gnuplot missing: no PNG plots"; }
"$python" "$root/bench/report/make_report.py" --results "$results" "${plots[@]}"
