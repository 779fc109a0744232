#!/usr/bin/env bash
# From a fresh clone: installs what is missing, builds the server and the CLI (Release, build/;
# scripts/build.sh builds everything, tools, tests and benchmarks too), makes the default model
# when there is none, starts slotserve-server on loopback, waits until it is healthy,
# streams one completion through slotserve-cli, then stops the server with SIGTERM (it drains
# and exits 0).
#
#   scripts/quickstart.sh ["prompt"]
#
# Environment: SLOTSERVE_BUILD_DIR (default build), SLOTSERVE_SKIP_BUILD=1 (use what is
# already built there), SLOTSERVE_WITH_CUDA (default: OFF when no NVIDIA GPU is visible, else
# AUTO), SLOTSERVE_MODEL (default: the bundled
# default model, made by scripts/make-default-model.sh), PORT / METRICS_PORT (default 50051 /
# 9464, on 127.0.0.1).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prompt=${1:-In the beginning God created}
build_dir=${SLOTSERVE_BUILD_DIR:-$root/build}
port=${PORT:-50051}
metrics_port=${METRICS_PORT:-9464}

# Without a GPU the server runs on the CPU, so the CUDA kernels are left out: nvcc was most of
# the quick start's build (server and CLI from a fresh clone on a 2-core VM with CUDA 13
# installed: 9m22s with them, 3m23s without). scripts/build.sh builds them again.
gpu_visible() { [ -e /dev/nvidia0 ] || nvidia-smi -L >/dev/null 2>&1; }

if [ "${SLOTSERVE_SKIP_BUILD:-0}" != 1 ]; then
  with_cuda=${SLOTSERVE_WITH_CUDA:-}
  if [ -z "$with_cuda" ]; then
    if gpu_visible; then
      with_cuda=AUTO
    else
      with_cuda=OFF
      echo "quickstart: no NVIDIA GPU visible: building without the CUDA backend"
    fi
  fi
  SLOTSERVE_BUILD_DIR=$build_dir SLOTSERVE_BUILD_TARGETS="slotserve-server slotserve-cli" \
    SLOTSERVE_WITH_CUDA=$with_cuda "$root/scripts/build.sh"
fi
server_bin=$build_dir/server/slotserve-server
cli_bin=$build_dir/clients/slotserve-cli

# The server's own default (no --model): the trained demo model when it is committed, else
# the random-weight one make-default-model.sh writes (made here when missing).
model_flag=()
if [ -n "${SLOTSERVE_MODEL:-}" ]; then
  model_flag=(--model "$SLOTSERVE_MODEL")
elif [ ! -f "$root/models/trained/kjv-abc-m32/config.json" ] &&
     [ ! -f "$root/build/default-model/config.json" ]; then
  "$root/scripts/make-default-model.sh"
fi

log=$(mktemp -t slotserve-quickstart.XXXXXX.log)
"$server_bin" "${model_flag[@]}" --listen "127.0.0.1:$port" \
  --metrics-listen "127.0.0.1:$metrics_port" 2>"$log" &
server_pid=$!
stop_server() {
  if kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" || true
  fi
}
trap stop_server EXIT

cli=("$cli_bin" --server "127.0.0.1:$port")
for _ in $(seq 1 100); do
  if "${cli[@]}" --timeout 1s health >/dev/null 2>&1; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "quickstart: the server exited:" >&2
    cat "$log" >&2
    exit 1
  fi
  sleep 0.2
done
cat "$log"
"${cli[@]}" health
echo "--- streaming a completion of: $prompt"
"${cli[@]}" generate --max-new-tokens 48 --temperature 0.8 --seed 1 "$prompt"
echo "--- metrics: curl -s http://127.0.0.1:$metrics_port/metrics"
curl -s "http://127.0.0.1:$metrics_port/metrics" | grep -E '^slotserve_(generated_tokens_total|requests_total)' || true

trap - EXIT
kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
cat "$log" | tail -n 2
if [ "$status" -ne 0 ]; then
  echo "quickstart: the server exited with status $status after SIGTERM" >&2
  exit 1
fi
echo "quickstart: done (server drained and exited 0)"
