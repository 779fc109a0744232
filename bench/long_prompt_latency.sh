#!/usr/bin/env bash
# A long prompt arriving while streams decode (issue 16 item 3), through the real server and
# gRPC clients: for each server configuration, start slotserve-server on a loopback port, run
# slotserve-bench-long-prompt (N streams decoding, then one long prompt), stop the server.
# Prints a Markdown table: median inter-token gap, longest gap during the prefill, their ratio
# and the long prompt's time to first token, with --max-step-latency auto (the default) and off.
#   bench/long_prompt_latency.sh [BUILD_DIR] [MODEL_DIR] [STREAMS] [PROMPT_TOKENS]
set -euo pipefail
build=${1:-build} model=${2:-models/trained/kjv-abc-m32} streams=${3:-8} prompt=${4:-4000}
server_bin=$build/server/slotserve-server
client=$build/bench/slotserve-bench-long-prompt
for binary in "$server_bin" "$client"; do
  [ -x "$binary" ] || { echo "long_prompt_latency.sh: no $binary (build it first)" >&2; exit 1; }
done
log=$(mktemp)
server_pid=
stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" || true
  fi
  server_pid=
}
trap 'stop_server; rm -f "$log"' EXIT

echo "| server flags | streams | prompt tokens | median gap ms | max gap in prefill ms | ratio | long prompt TTFT ms |"
echo "|---|---:|---:|---:|---:|---:|---:|"
configs=(
  "--max_step_latency=auto"
  "--max_step_latency=off"
  "--max_step_latency=auto --prefix_cache_memory=0"
  "--max_step_latency=off --prefix_cache_memory=0"
)
for flags in "${configs[@]}"; do
  : >"$log"
  # shellcheck disable=SC2086  # $flags is a list of flags
  "$server_bin" --model="$model" --backend=cpu --threads=1 --listen=127.0.0.1:0 \
    --metrics_listen=127.0.0.1:0 --max_slots=32 --drain_timeout=10s $flags 2>"$log" &
  server_pid=$!
  address=
  for _ in $(seq 1 300); do
    address=$(grep -o 'listening on [0-9.]*:[0-9]*' "$log" | head -1 | cut -d' ' -f3 || true)
    [ -n "$address" ] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.2
  done
  [ -n "$address" ] || { echo "server did not start" >&2; cat "$log" >&2; exit 1; }
  "$client" --server="$address" --streams="$streams" --prompt_tokens="$prompt" --label="$flags"
  stop_server
done
