#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the full Release build (CUDA tests
# skip without a GPU), then the unit, golden and integration suites again under ASan + UBSan,
# the engine's suite under ThreadSanitizer, and every libFuzzer target for a short while (clang,
# ASan + UBSan; scripts/fuzz.sh runs them longer).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${SLOTSERVE_JOBS:-$(nproc)}

"$root/scripts/build.sh"
ctest --test-dir "$root/build" --output-on-failure -j "$jobs"

if [ "${SLOTSERVE_SKIP_SANITIZERS:-0}" != 1 ]; then
  # ASan + UBSan over everything: kernels to the server process the integration tests start.
  cmake -S "$root" -B "$root/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DSLOTSERVE_SANITIZE=ON -DSLOTSERVE_WITH_CUDA=OFF -DSLOTSERVE_BUILD_SERVER=ON \
    -DSLOTSERVE_BUILD_BENCH=OFF
  cmake --build "$root/build-asan" -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$root/build-asan" --output-on-failure -j "$jobs" -L 'unit|golden|integration'

  # ThreadSanitizer over the engine: the scheduler's thread, submitting threads, cancellation
  # and the session store race by design. (The server process is left out: Debian's gRPC and
  # absl are not built with TSan, so their own threads and absl::Mutex look unsynchronised and
  # drown any report of ours; the engine uses std::mutex, which TSan sees.)
  cmake -S "$root" -B "$root/build-tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSLOTSERVE_WITH_CUDA=OFF -DSLOTSERVE_BUILD_SERVER=OFF -DSLOTSERVE_BUILD_BENCH=OFF \
    -DCMAKE_CXX_FLAGS=-fsanitize=thread -DCMAKE_C_FLAGS=-fsanitize=thread \
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread
  # The base tests ride along for the compute worker pool (base/worker_pool.h), whose
  # hand-offs are lock-free atomics.
  cmake --build "$root/build-tsan" -j "$jobs" --target slotserve_engine_tests slotserve_base_tests
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    "$root/build-tsan/tests/unit/engine/slotserve_engine_tests"
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    "$root/build-tsan/tests/unit/base/slotserve_base_tests"
fi

if [ "${SLOTSERVE_SKIP_FUZZ:-0}" != 1 ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$root/build-fuzz" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLOTSERVE_FUZZ=ON -DSLOTSERVE_WITH_CUDA=OFF \
    -DSLOTSERVE_BUILD_BENCH=OFF -DSLOTSERVE_FUZZ_SECONDS="${FUZZ_SECONDS:-10}"
  cmake --build "$root/build-fuzz" -j "$jobs" --target slotserve_fuzzers
  ctest --test-dir "$root/build-fuzz" --output-on-failure -L fuzz
fi
