#!/usr/bin/env bash
# The end-to-end gRPC suite of scripts/bench.sh, per model kind:
#   1. start slotserve-server on a loopback port the kernel picks (port 0);
#   2. fixed-concurrency bursts (all requests at once) at 1, 8, 32, 64 -> decode_grpc.csv,
#      to set beside engine-only LanguageModel::Step at the same batch;
#   3. Poisson arrivals at 25/50/75/90% of the largest burst's throughput -> serving_grpc.csv
#      (TTFT and inter-token latency percentiles, throughput);
#   4. SIGTERM the server and wait for its drain.
#   e2e.sh BUILD_DIR MODELS_DIR RESULTS_DIR THREADS QUICK(0|1)
set -euo pipefail
build=$1 models=$2 results=$3 threads=$4 quick=$5
root=$(cd "$(dirname "$0")/.." && pwd)
server_bin=$build/server/slotserve-server
loadgen=$build/bench/slotserve-bench-loadgen
[ -x "$loadgen" ] || { echo "e2e.sh: no load generator at $loadgen" >&2; exit 1; }

if [ "$quick" = 1 ]; then
  bursts=(1 8) rates=(0.5) poisson_requests=12 new_tokens=16 kinds=(abc softmax)
else
  bursts=(1 8 32 64) rates=(0.25 0.5 0.75 0.9) poisson_requests=96 new_tokens=64
  kinds=(abc rfa luna softmax)
fi
prompt_tokens=16
log_dir=$results/server-logs
rm -rf "$log_dir"
mkdir -p "$log_dir"

server_pid=
stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" || true
  fi
  server_pid=
}
trap stop_server EXIT

for kind in "${kinds[@]}"; do
  log=$log_dir/$kind.log
  : >"$log"  # truncate now: the server's own redirect may come after the first grep below
  "$server_bin" --model="$models/$kind" --backend=cpu --threads="$threads" \
    --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --max_slots=64 --max_queued=1024 \
    --default_max_new_tokens="$new_tokens" --drain_timeout=10s 2>"$log" &
  server_pid=$!
  address=
  for _ in $(seq 1 300); do  # up to 60 s for the model to load
    address=$(grep -o 'listening on [0-9.]*:[0-9]*' "$log" | head -1 | cut -d' ' -f3 || true)
    [ -n "$address" ] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.2
  done
  [ -n "$address" ] || { echo "e2e.sh: $kind server did not start" >&2; cat "$log" >&2; exit 1; }
  echo "e2e.sh: $kind server on $address" >&2

  common=(--server="$address" --prompt_tokens="$prompt_tokens" --new_tokens="$new_tokens")
  "$loadgen" "${common[@]}" --requests=8 --rate=0 >/dev/null  # warm-up
  for requests in "${bursts[@]}"; do
    "$loadgen" "${common[@]}" --requests="$requests" --rate=0 --out_csv="$results/decode_grpc.csv"
  done
  # Capacity in requests/s: overall tokens/s of the largest burst (ramp-up included, so a
  # little conservative) / tokens per request.
  capacity=$(tail -1 "$results/decode_grpc.csv" | cut -d, -f8)
  if ! awk -v c="$capacity" 'BEGIN {exit !(c > 0)}'; then
    echo "e2e.sh: $kind: no capacity measured, Poisson runs skipped" >&2
    stop_server
    continue
  fi
  for fraction in "${rates[@]}"; do
    rate=$(awk -v c="$capacity" -v f="$fraction" -v n="$new_tokens" 'BEGIN {printf "%.2f", c * f / n}')
    "$loadgen" "${common[@]}" --requests="$poisson_requests" --rate="$rate" \
      --out_csv="$results/serving_grpc.csv"
  done
  stop_server
done
# The logs are committed with the run's tables: name paths inside the repository relative to it,
# not by this checkout's absolute path.
for log in "$log_dir"/*.log; do
  sed -i "s|$root/||g" "$log"
done
