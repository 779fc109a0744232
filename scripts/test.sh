#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the full Release build (CUDA tests
# skip without a GPU), then the unit and golden suites again under ASan + UBSan, then every
# libFuzzer target for a short while (clang, ASan + UBSan; scripts/fuzz.sh runs them longer).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${SLOTSERVE_JOBS:-$(nproc)}

"$root/scripts/build.sh"
ctest --test-dir "$root/build" --output-on-failure -j "$jobs"

if [ "${SLOTSERVE_SKIP_SANITIZERS:-0}" != 1 ]; then
  cmake -S "$root" -B "$root/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DSLOTSERVE_SANITIZE=ON -DSLOTSERVE_WITH_CUDA=OFF -DSLOTSERVE_BUILD_SERVER=OFF \
    -DSLOTSERVE_BUILD_BENCH=OFF
  cmake --build "$root/build-asan" -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$root/build-asan" --output-on-failure -j "$jobs" -L 'unit|golden'
fi

if [ "${SLOTSERVE_SKIP_FUZZ:-0}" != 1 ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$root/build-fuzz" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLOTSERVE_FUZZ=ON -DSLOTSERVE_WITH_CUDA=OFF \
    -DSLOTSERVE_BUILD_BENCH=OFF -DSLOTSERVE_FUZZ_SECONDS="${FUZZ_SECONDS:-10}"
  cmake --build "$root/build-fuzz" -j "$jobs" --target slotserve_fuzzers
  ctest --test-dir "$root/build-fuzz" --output-on-failure -L fuzz
fi
