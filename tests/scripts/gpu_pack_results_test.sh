#!/usr/bin/env bash
# scripts/gpu-pack-results.sh (gpu-check.sh --results-to) delivers a GPU run in a few files: the
# summary and this run's tables (from the build), not the committed tables of earlier runs, and
# one archive holding every log (the test binaries' and the sanitizer shards'); a run cut short
# still gets whatever exists.
set -euo pipefail
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "gpu_pack_results_test: $*" >&2; exit 1; }

mkdir -p "$work/build/sanitizer-logs" "$work/build/gpu-results" "$work/results"
echo "kernel tests log" >"$work/build/slotserve_kernel_tests.log"
echo "racecheck shard 3" >"$work/build/sanitizer-logs/racecheck-slotserve_golden_tests-3.log"
echo "not a log" >"$work/build/CMakeCache.txt"
echo "# GPU check" >"$work/results/gpu-summary.md"
echo "model,kind,batch" >"$work/build/gpu-results/decode_engine.csv"
echo "an earlier run's decode table" >"$work/results/gpu-decode.csv"
echo "an earlier run's A/B" >"$work/results/gpu-ab-block-threads.csv"

"$root/scripts/gpu-pack-results.sh" "$work/build" "$work/results" "$work/out" >/dev/null
got=$(cd "$work/out" && ls | sort | tr '\n' ' ')
[ "$got" = "gpu-check-logs.tar.xz gpu-decode.csv gpu-summary.md " ] || fail "delivered: $got"
cmp -s "$work/out/gpu-summary.md" "$work/results/gpu-summary.md" || fail "summary differs"
cmp -s "$work/out/gpu-decode.csv" "$work/build/gpu-results/decode_engine.csv" ||
  fail "the decode table is not this run's"
listing=$(tar -tJf "$work/out/gpu-check-logs.tar.xz" | sort | tr '\n' ' ')
for expected in slotserve_kernel_tests.log \
  sanitizer-logs/racecheck-slotserve_golden_tests-3.log; do
  grep -qF -- "$expected" <<<"$listing" || fail "archive lacks $expected: $listing"
done
grep -qF CMakeCache.txt <<<"$listing" && fail "archive holds more than logs: $listing"
mkdir -p "$work/unpacked"
tar -C "$work/unpacked" -xJf "$work/out/gpu-check-logs.tar.xz"
grep -q "racecheck shard 3" "$work/unpacked/sanitizer-logs/racecheck-slotserve_golden_tests-3.log" ||
  fail "a log's text did not survive the archive"

# Cut short before the build: no build folder, no tables; the summary still comes back.
"$root/scripts/gpu-pack-results.sh" "$work/no-build" "$work/results" "$work/out2" >/dev/null
got=$(cd "$work/out2" && ls | tr '\n' ' ')
[ "$got" = "gpu-summary.md " ] || fail "a run cut short delivered: $got"

if "$root/scripts/gpu-pack-results.sh" "$work/build" 2>/dev/null; then
  fail "accepted a missing argument"
fi
echo "gpu-pack-results.sh: ok"
