#!/usr/bin/env bash
# scripts/gpu-check.sh cannot run without a GPU, so this checks what can be checked anywhere:
# both scripts parse (bash -n), and --dry-run prints every step the GPU run would take (CUDA
# build, server probe, tests with SLOTSERVE_REQUIRE_GPU, each compute-sanitizer tool, the
# benchmarks) and exits 0 without running any of them; --prebuilt BUNDLE (a build packed by
# scripts/gpu-bundle.sh) skips the CUDA build and runs the bundle's test binaries instead.
set -euo pipefail
root=$1
bash -n "$root/scripts/gpu-check.sh"
bash -n "$root/scripts/gpu-check-server.sh"
bash -n "$root/scripts/gpu-bundle.sh"
bash -n "$root/scripts/gpu-prebuilt-env.sh"
bash -n "$root/scripts/sanitizer-verdict.sh"
bash -n "$root/scripts/gpu-pack-results.sh"
out=$(SLOTSERVE_GPU_BUILD_DIR=/nonexistent/build-gpu "$root/scripts/gpu-check.sh" --dry-run)
for expected in "-DSLOTSERVE_WITH_CUDA=ON" "gpu-check-server.sh /nonexistent/build-gpu" \
  "ctest --test-dir /nonexistent/build-gpu" "--tool memcheck" "--tool racecheck" \
  "--tool synccheck" "--suite=decode --backend=cuda" "--suite=prefill --backend=cuda"; do
  if ! grep -qF -- "$expected" <<<"$out"; then
    echo "gpu-check.sh --dry-run does not print '$expected':" >&2
    echo "$out" >&2
    exit 1
  fi
done
out=$("$root/scripts/gpu-check.sh" --prebuilt /nonexistent/bundle --dry-run)
for expected in "gpu-prebuilt-env.sh /nonexistent/bundle" \
  "gpu-check-server.sh /nonexistent/bundle" \
  "/nonexistent/bundle/tests/unit/kernels/slotserve_kernel_tests" \
  "/nonexistent/bundle/tests/golden/slotserve_golden_tests" "--tool memcheck" \
  "/nonexistent/bundle/bench/slotserve-bench --suite=decode --backend=cuda"; do
  if ! grep -qF -- "$expected" <<<"$out"; then
    echo "gpu-check.sh --prebuilt --dry-run does not print '$expected':" >&2
    echo "$out" >&2
    exit 1
  fi
done
if grep -qF -- "-DSLOTSERVE_WITH_CUDA=ON" <<<"$out"; then
  echo "gpu-check.sh --prebuilt would still configure a CUDA build:" >&2
  echo "$out" >&2
  exit 1
fi
out=$("$root/scripts/gpu-check.sh" --prebuilt /nonexistent/bundle --results-to /nonexistent/out \
  --dry-run)
if ! grep -qE -- "^\+ on exit: .*/scripts/gpu-pack-results.sh /nonexistent/bundle .* /nonexistent/out$" <<<"$out"; then
  echo "gpu-check.sh --results-to --dry-run does not print the packing step:" >&2
  echo "$out" >&2
  exit 1
fi
if [ -e /nonexistent/out ]; then echo "--dry-run created the results folder" >&2; exit 1; fi
if [ -e /nonexistent/build-gpu ]; then echo "--dry-run created the build dir" >&2; exit 1; fi
if "$root/scripts/gpu-check.sh" --bogus 2>/dev/null; then
  echo "gpu-check.sh accepted an unknown option" >&2
  exit 1
fi
echo "gpu-check.sh: syntax and --dry-run ok"
