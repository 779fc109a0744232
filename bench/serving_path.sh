#!/usr/bin/env bash
# Issue 16 item 4 (the lean serving path), measured in one sitting: for random-weight models of
# the bundled size (abc and softmax), tokens/s of
#   engine      LanguageModel::Step alone (slotserve-bench --suite=decode) at the served
#               requests' mean context, prompt + new_tokens / 2 = 144: a softmax step reads
#               every cached row, so an engine measured at a shorter context (128 until
#               2026-11-25) is ~5% faster than the steps the served requests really take,
#               and their share reads ~5 points low. ABC's step does not depend on it.
#   scheduler   the in-process engine::Scheduler (--suite=scheduler: continuous batching,
#               sampling, detokenising, events; no RPC),
#   gRPC        a real slotserve-server driven by slotserve-bench-loadgen (streaming RPCs),
# at 1, 8 and 32 concurrent requests (greedy, ignore_eos, 16 prompt + 256 new tokens), each
# path's steady decode tokens/s and its share of the engine's.
#
#   bench/serving_path.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, bench/results)
#
# The machine is noisy at batch 1 (±50% between back-to-back runs), so the three paths are run
# ROUNDS times (default 5) interleaved, and the table quotes the median of each path's
# tokens/s and the median of the per-round shares.
#
# Writes OUT_DIR/serving_path.csv and serving_path.md. Not run in CI.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
out=${2:-$root/bench/results}
threads=${BENCH_THREADS:-1}
batches=(1 8 32)
new_tokens=256
prompt_tokens=16
engine_context=$((prompt_tokens + new_tokens / 2))
models=$build/bench-serving-path
export PYTHONPATH=$root/python OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
for binary in bench/slotserve-bench bench/slotserve-bench-loadgen server/slotserve-server; do
  [ -x "$build/$binary" ] || { echo "serving_path.sh: $build/$binary not built" >&2; exit 2; }
done
[ -d "$models/abc" ] || /usr/bin/python3 "$root/bench/python/make_bench_models.py" \
  --out "$models" --size bundled
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
list=$(IFS=,; echo "${batches[*]}")
csv=$out/serving_path.csv
rounds=${ROUNDS:-5}
echo "round,kind,path,requests,tokens_per_s" >"$csv"
for round in $(seq 1 "$rounds"); do
for kind in abc softmax; do
  "$build/bench/slotserve-bench" --suite=decode --models="$models/$kind" --batches="$list" \
    --context=$engine_context --threads="$threads" --repeats=9 --steps_per_repeat=32 >"$work/decode.txt"
  awk -v round="$round" -v kind="$kind" '$2 == kind && $3 ~ /^[0-9]+$/ {print round "," kind ",engine," $3 "," $8}' \
    "$work/decode.txt" >>"$csv"
  "$build/bench/slotserve-bench" --suite=scheduler --models="$models/$kind" \
    --concurrency="$list" --prompt_tokens=$prompt_tokens --new_tokens=$new_tokens --rounds=5 --threads="$threads" \
    >"$work/scheduler.txt"
  awk -v round="$round" -v kind="$kind" '$2 == kind && $3 ~ /^[0-9]+$/ {print round "," kind ",scheduler," $3 "," $6}' \
    "$work/scheduler.txt" >>"$csv"
  log=$work/$kind-server.log
  "$build/server/slotserve-server" --model="$models/$kind" --backend=cpu --threads="$threads" \
    --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --max_slots=64 2>"$log" &
  server=$!
  address=
  for _ in $(seq 1 300); do
    address=$(grep -o 'listening on [0-9.]*:[0-9]*' "$log" | head -1 | cut -d' ' -f3 || true)
    [ -n "$address" ] && break
    sleep 0.2
  done
  [ -n "$address" ] || { cat "$log" >&2; exit 1; }
  common=(--server="$address" --prompt_tokens=$prompt_tokens --new_tokens=$new_tokens --rate=0)
  "$build/bench/slotserve-bench-loadgen" "${common[@]}" --requests=8 >/dev/null  # warm-up
  for requests in "${batches[@]}"; do
    "$build/bench/slotserve-bench-loadgen" "${common[@]}" --requests="$requests" \
      --out_csv="$work/grpc.csv" >/dev/null
  done
  kill -TERM "$server"
  wait "$server" || true
  tail -n +2 "$work/grpc.csv" | awk -F, -v round="$round" -v kind="$kind" \
    '{print round "," kind ",gRPC," $4 "," $7}' >>"$csv"
  rm -f "$work/grpc.csv"
done
done
/usr/bin/python3 - "$csv" "$out/serving_path.md" "$threads" "$rounds" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
value = {(r["round"], r["kind"], r["path"], r["requests"]): float(r["tokens_per_s"]) for r in rows}
rounds = sorted({r["round"] for r in rows})
lines = [f"Steady decode tokens/s, {sys.argv[3]} thread(s), medians of {sys.argv[4]} interleaved "
         "rounds; share = path / engine Step at the same batch in the same round (median).", "",
         "| kind | requests | engine Step | scheduler (share) | gRPC (share) |",
         "|---|---:|---:|---:|---:|"]
for kind in ("abc", "softmax"):
    for n in ("1", "8", "32"):
        engine = [value[(r, kind, "engine", n)] for r in rounds if (r, kind, "engine", n) in value]
        cells = [kind, n, f"{statistics.median(engine):,.0f}" if engine else "?"]
        for path in ("scheduler", "gRPC"):
            pairs = [(value[(r, kind, path, n)], value[(r, kind, "engine", n)]) for r in rounds
                     if (r, kind, path, n) in value and (r, kind, "engine", n) in value]
            if not pairs:
                cells.append("?")
                continue
            tokens = statistics.median(p for p, _ in pairs)
            share = statistics.median(p / e for p, e in pairs)
            cells.append(f"{tokens:,.0f} ({100 * share:.0f}%)")
        lines.append("| " + " | ".join(cells) + " |")
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
