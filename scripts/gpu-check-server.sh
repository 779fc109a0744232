#!/usr/bin/env bash
# Part of scripts/gpu-check.sh: slotserve-server --backend=cuda must start on this machine's GPU
# (a GPU the runtime cannot use makes it exit with the CUDA error text instead) and report the
# cuda backend in its start-up line; then it is stopped with SIGTERM and must drain cleanly.
#   scripts/gpu-check-server.sh BUILD_DIR MODEL_DIR
set -euo pipefail
build=$1 model=$2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$build/server/slotserve-server" --model="$model" --backend=cuda --listen=127.0.0.1:0 \
  --metrics_listen=127.0.0.1:0 --drain_timeout=5s 2>"$log" &
pid=$!
for _ in $(seq 1 300); do
  grep -q 'listening on' "$log" && break
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "gpu-check-server: slotserve-server --backend=cuda exited before serving:" >&2
    cat "$log" >&2
    exit 1
  fi
  sleep 0.2
done
status=0
grep -q 'backend cuda' "$log" || { echo "gpu-check-server: not on cuda:" >&2; cat "$log" >&2; status=1; }
kill -TERM "$pid"
wait "$pid" || { echo "gpu-check-server: the server did not exit 0 after SIGTERM" >&2; status=1; }
exit "$status"
