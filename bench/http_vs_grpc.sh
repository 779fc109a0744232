#!/usr/bin/env bash
# End-to-end throughput and TTFT over the OpenAI-compatible HTTP API next to gRPC, at the same
# load on one server (issue 17): slotserve-server with both --listen and --http-listen; then
# ROUNDS rounds, each a burst of CONCURRENCY streaming requests (token-id prompts of 16 tokens,
# greedy, NEW_TOKENS each, ignore_eos) through gRPC Generate and the same through
# POST /v1/completions with "stream": true, the order alternating between rounds so that
# neither protocol always runs on the warmer (or noisier) side. Raw rows go to
# RESULTS/http_vs_grpc_{grpc,http}.csv; the medians over the rounds, and HTTP as a fraction
# of gRPC, to RESULTS/http_vs_grpc.md (printed too).
#   http_vs_grpc.sh BUILD_DIR MODEL_DIR RESULTS_DIR [ROUNDS=5] [CONCURRENCY=32] [NEW_TOKENS=64]
#                   [THREADS=1]
set -euo pipefail
build=$1 model=$2 results=$3
rounds=${4:-5} concurrency=${5:-32} new_tokens=${6:-64} threads=${7:-1}
here=$(cd "$(dirname "$0")" && pwd)
server_bin=$build/server/slotserve-server
loadgen=$build/bench/slotserve-bench-loadgen
mkdir -p "$results"
log=$(mktemp)
server_pid=
stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" || true
  fi
  rm -f "$log"
}
trap stop_server EXIT

"$server_bin" --model="$model" --backend=cpu --threads="$threads" --listen=127.0.0.1:0 \
  --metrics-listen=127.0.0.1:0 --http-listen=127.0.0.1:0 --max-slots=64 --max-queued=1024 \
  --drain-timeout=10s 2>"$log" &
server_pid=$!
grpc= http=
for _ in $(seq 1 300); do  # up to 60 s for the model to load
  grpc=$(grep -o 'listening on [0-9.]*:[0-9]*' "$log" | head -1 | cut -d' ' -f3 || true)
  http=$(grep -o 'HTTP API on http://[0-9.]*:[0-9]*' "$log" | head -1 | cut -d/ -f3 || true)
  [ -n "$grpc" ] && [ -n "$http" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.2
done
[ -n "$grpc" ] && [ -n "$http" ] || { echo "http_vs_grpc.sh: server did not start" >&2; exit 1; }
echo "http_vs_grpc.sh: gRPC on $grpc, HTTP on $http; $rounds rounds of $concurrency streams" >&2

load=$(cut -d' ' -f1 /proc/loadavg)  # the machine may be shared: say how busy it was
common=(--server="$grpc" --http_server="$http" --prompt_tokens=16 --new_tokens="$new_tokens"
        --rate=0)
rm -f "$results/http_vs_grpc_grpc.csv" "$results/http_vs_grpc_http.csv"
for protocol in grpc http; do  # warm-up: threads, caches, connections
  "$loadgen" "${common[@]}" --protocol="$protocol" --requests=8 >/dev/null
done
for round in $(seq 1 "$rounds"); do
  order=(grpc http)
  [ $((round % 2)) = 0 ] && order=(http grpc)
  for protocol in "${order[@]}"; do
    "$loadgen" "${common[@]}" --protocol="$protocol" --requests="$concurrency" \
      --out_csv="$results/http_vs_grpc_$protocol.csv" >/dev/null
  done
done
"${SLOTSERVE_PYTHON:-/usr/bin/python3}" "$here/report/http_vs_grpc_table.py" "$results" \
  "$(nproc) cores (load average $load at the start), server --threads=$threads" | tee "$results/http_vs_grpc.md"
