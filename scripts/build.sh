#!/usr/bin/env bash
# Installs what is missing, then configures and builds slotserve (Release) into build/.
# Extra arguments go to CMake's configure step. SLOTSERVE_BUILD_TARGETS (space-separated CMake
# targets) builds only those and what they need; the default is everything. SLOTSERVE_WITH_CUDA
# (AUTO, ON or OFF; default AUTO: on where nvcc is found) is passed on every configure, so a
# build directory that the quick start configured without CUDA gets it back here.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
build_dir=${SLOTSERVE_BUILD_DIR:-$root/build}
jobs=${SLOTSERVE_JOBS:-$(nproc)}
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSLOTSERVE_WITH_CUDA="${SLOTSERVE_WITH_CUDA:-AUTO}" "$@"
targets=()
for target in ${SLOTSERVE_BUILD_TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$build_dir" -j "$jobs" "${targets[@]}"
