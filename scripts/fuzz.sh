#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang, ASan and UBSan into build-fuzz/ and
# runs each for FUZZ_SECONDS (default 300; CI runs them for 10 through scripts/test.sh).
#   scripts/fuzz.sh [TARGET...]      (default: every target; names as in tests/fuzz, e.g.
#                                     fuzz_safetensors)
# What a fuzzer finds is left under build-fuzz/tests/fuzz/work/<target>/artifacts/: turn it
# into a unit test, fix, and rerun.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${SLOTSERVE_JOBS:-$(nproc)}
seconds=${FUZZ_SECONDS:-300}
"$root/scripts/install-deps.sh"
CC=clang CXX=clang++ cmake -S "$root" -B "$root/build-fuzz" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLOTSERVE_FUZZ=ON -DSLOTSERVE_WITH_CUDA=OFF \
  -DSLOTSERVE_BUILD_BENCH=OFF -DSLOTSERVE_FUZZ_SECONDS="$seconds"
cmake --build "$root/build-fuzz" -j "$jobs" --target slotserve_fuzzers
filter=()
if [ $# -gt 0 ]; then filter=(-R "^($(IFS='|'; echo "$*"))\$"); fi
ctest --test-dir "$root/build-fuzz" --output-on-failure -L fuzz "${filter[@]}"
