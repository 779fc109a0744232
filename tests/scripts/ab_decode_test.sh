#!/usr/bin/env bash
# bench/ab_decode.sh's bookkeeping, with stand-in benchmark binaries that print the decode
# suite's table (step ms from the environment) and log each call: BASE_ENV / NEW_ENV reach only
# their side, BACKEND, BENCH_ARGS and the other settings reach the binary, the sides alternate which runs
# first, and the summary's medians and ratio come from the rows.
set -euo pipefail
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "ab_decode_test: $*" >&2; exit 1; }

for side in base new; do
  mkdir -p "$work/$side/bench"
  cat >"$work/$side/bench/slotserve-bench" <<STANDIN
#!/usr/bin/env bash
echo "$side \${FAKE_STEP_MS:-unset} \$*" >>"$work/calls.log"
echo "== decode throughput against batch size (engine only, context 8)"
echo "  model  kind  batch  context  step_ms  step_ms_p10  step_ms_p90  tokens_per_s"
echo "  tiny   abc   1      8        \${FAKE_STEP_MS:-9.0}  0  0  1"
echo "  tiny   abc   8      8        \${FAKE_STEP_MS:-9.0}  0  0  1"
STANDIN
  chmod +x "$work/$side/bench/slotserve-bench"
done

summary=$(ROUNDS=3 BATCHES=1,8 BACKEND=cuda BASE_ENV="FAKE_STEP_MS=2.0" NEW_ENV="FAKE_STEP_MS=0.5" \
  BENCH_ARGS="--kv_cache_dtype=f16 --int8_activations=true" \
  "$root/bench/ab_decode.sh" "$work/base" "$work/new" "$work/ab.csv" some/model)

calls=$(cut -d' ' -f1,2 "$work/calls.log" | tr '\n' ',')
[ "$calls" = "base 2.0,new 0.5,new 0.5,base 2.0,base 2.0,new 0.5," ] ||
  fail "calls (side, FAKE_STEP_MS) in order: $calls"
grep -q -- "--backend=cuda" "$work/calls.log" || fail "BACKEND did not reach the binary"
grep -q -- "--models=some/model" "$work/calls.log" || fail "the model did not reach the binary"
grep -q -- "--batches=1,8" "$work/calls.log" || fail "BATCHES did not reach the binary"
[ "$(grep -c -- "--kv_cache_dtype=f16 --int8_activations=true" "$work/calls.log")" = 6 ] ||
  fail "BENCH_ARGS did not reach every call as two flags: $(cat "$work/calls.log")"
[ "$(wc -l <"$work/ab.csv")" = 13 ] || fail "CSV rows: $(cat "$work/ab.csv")"
grep -q "^2,new,tiny,8,0.5$" "$work/ab.csv" || fail "CSV lacks round 2's new row: $(cat "$work/ab.csv")"
grep -qF "| tiny | 1 | 2.000 | 0.500 | ×4.00 |" <<<"$summary" || fail "summary: $summary"
grep -qF "| tiny | 8 | 2.000 | 0.500 | ×4.00 |" <<<"$summary" || fail "summary: $summary"
echo "ab_decode.sh: ok"
