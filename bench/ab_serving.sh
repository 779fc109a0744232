#!/usr/bin/env bash
# A/B of two slotserve-server binaries' gRPC serving, side by side in one sitting: per round and
# kind (random-weight models of the bundled size), the engine's Step at the served requests'
# mean context, then a burst of 1, 8 and 32 streaming requests (16 prompt + 256 new tokens,
# greedy) against each server in turn. Prints, per kind and burst, the median steady tokens/s of
# each server, its median share of the engine, every round's share, and the inter-token gap's
# p50 / p99 (ms).
#
#   bench/ab_serving.sh BASE_SERVER NEW_SERVER CSV [BUILD_DIR]   (default build dir: build)
#   Environment: ROUNDS (5), THREADS (1), KINDS ("abc softmax").
# The load generator runs on the same machine. Pause other work while it runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base=$1 new=$2 csv=$3
build=${4:-$root/build}
threads=${THREADS:-1}
prompt_tokens=16
new_tokens=256
models=$build/bench-serving-path
export OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
[ -d "$models/abc" ] || /usr/bin/python3 "$root/bench/python/make_bench_models.py" \
  --out "$models" --size bundled
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "round,kind,path,requests,tokens_per_s,itl_ms_p50,itl_ms_p99" >"$csv"
for round in $(seq "${ROUNDS:-5}"); do
  for kind in ${KINDS:-abc softmax}; do
    "$build/bench/slotserve-bench" --suite=decode --models="$models/$kind" --batches=1,8,32 \
      --context=$((prompt_tokens + new_tokens / 2)) --threads="$threads" --repeats=9 \
      --steps_per_repeat=32 2>/dev/null |
      awk -v r="$round" -v k="$kind" '$3 ~ /^[0-9]+$/ {print r "," k ",engine," $3 "," $8 ",,"}' \
        >>"$csv"
    for which in base new; do
      server=$base
      [ "$which" = new ] && server=$new
      log=$work/server.log
      "$server" --model="$models/$kind" --backend=cpu --threads="$threads" \
        --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --max_slots=64 2>"$log" &
      pid=$!
      address=
      for _ in $(seq 1 300); do
        address=$(grep -o 'listening on [0-9.]*:[0-9]*' "$log" | head -1 | cut -d' ' -f3 || true)
        [ -n "$address" ] && break
        sleep 0.2
      done
      [ -n "$address" ] || { cat "$log" >&2; exit 1; }
      common=(--server="$address" --prompt_tokens=$prompt_tokens --new_tokens=$new_tokens --rate=0)
      "$build/bench/slotserve-bench-loadgen" "${common[@]}" --requests=8 >/dev/null  # warm-up
      for requests in 1 8 32; do
        rm -f "$work/burst.csv"
        "$build/bench/slotserve-bench-loadgen" "${common[@]}" --requests="$requests" \
          --out_csv="$work/burst.csv" >/dev/null
        tail -n 1 "$work/burst.csv" | awk -F, -v r="$round" -v k="$kind" -v w="$which" \
          '{print r "," k "," w "," $4 "," $7 "," $12 "," $14}' >>"$csv"
      done
      kill -TERM "$pid"
      wait "$pid" || true
    done
  done
done
/usr/bin/python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
value = {(r["round"], r["kind"], r["path"], r["requests"]): r for r in rows}
rounds = sorted({r["round"] for r in rows}, key=int)
print("| kind | requests | engine | base (share) | new (share) | base shares | new shares "
      "| ITL p50 / p99 base | ITL p50 / p99 new |")
print("|---|---:|---:|---:|---:|---|---|---|---|")
for kind in sorted({r["kind"] for r in rows}):
    for n in ("1", "8", "32"):
        engine = [float(value[(r, kind, "engine", n)]["tokens_per_s"]) for r in rounds]
        cells = [kind, n, f"{statistics.median(engine):,.0f}"]
        shares, gaps = [], []
        for path in ("base", "new"):
            got = [value[(r, kind, path, n)] for r in rounds]
            share = [float(g["tokens_per_s"]) / e for g, e in zip(got, engine)]
            cells.append(f"{statistics.median(float(g['tokens_per_s']) for g in got):,.0f} "
                         f"({100 * statistics.median(share):.1f}%)")
            shares.append(" ".join(f"{100 * s:.0f}" for s in share))
            gaps.append(f"{statistics.median(float(g['itl_ms_p50']) for g in got):.2f} / "
                        f"{min(float(g['itl_ms_p99']) for g in got):.1f}–"
                        f"{max(float(g['itl_ms_p99']) for g in got):.1f}")
        print("| " + " | ".join(cells + shares + gaps) + " |")
PY
