#!/usr/bin/env bash
# Packs a CUDA build for a GPU machine that has the NVIDIA driver and CUDA toolkit but none of
# the Debian development libraries the build needs (gRPC, protobuf, absl, OpenBLAS,
# sentencepiece, ...): the binaries scripts/gpu-check.sh runs, stripped, at their places under
# BUILD_DIR's name, the programs the tests call (bin/), and every shared library they load that is neither the C/C++ runtime nor
# CUDA's own (those come from the GPU machine, whose driver they must match).
#   scripts/gpu-bundle.sh BUILD_DIR OUT_DIR
# Then, on the GPU machine, from a checkout of the same commit:
#   scripts/gpu-check.sh --prebuilt OUT_DIR
# The test binaries name their data by the absolute source path they were built from
# (tests/golden/..., models/trained/...); the bundle records it in OUT_DIR/source_dir, and
# gpu-check.sh links that path to its checkout when it does not exist there.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: scripts/gpu-bundle.sh BUILD_DIR OUT_DIR" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
out=$2
grep -q '^SLOTSERVE_WITH_CUDA:STRING=ON$' "$build/CMakeCache.txt" || {
  echo "gpu-bundle: $build is not a CUDA build (configure with -DSLOTSERVE_WITH_CUDA=ON)" >&2
  exit 1
}
# What scripts/gpu-check.sh runs, relative to the build directory.
binaries=(server/slotserve-server bench/slotserve-bench models/tools/slotserve-generate
  tests/unit/kernels/slotserve_kernel_tests tests/unit/models/slotserve_model_tests
  tests/unit/engine/slotserve_engine_tests tests/golden/slotserve_golden_tests)
# Left to the GPU machine: the C and C++ runtimes (any newer glibc/libstdc++ runs these) and
# CUDA's libraries (the machine's toolkit matches its driver).
system_library='^(ld-linux|libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libnvidia)[.-]'

rm -rf "$out"
mkdir -p "$out/lib"
for binary in "${binaries[@]}"; do
  [ -x "$build/$binary" ] || { echo "gpu-bundle: $build/$binary is not built" >&2; exit 1; }
  mkdir -p "$out/$(dirname "$binary")"
  strip -o "$out/$binary" "$build/$binary"
done
# Programs the tests run (the engine tests train a tiny SentencePiece model with spm_train).
mkdir -p "$out/bin"
tools=()
for tool in spm_train; do
  path=$(command -v "$tool") || { echo "gpu-bundle: $tool not found (sentencepiece)" >&2; exit 1; }
  cp "$path" "$out/bin/$tool"
  tools+=("$path")
done
for binary in "${binaries[@]/#/$build/}" "${tools[@]}"; do
  ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'
done | sort -u | while read -r library; do
  name=$(basename "$library")
  if [[ ! $name =~ $system_library ]]; then
    cp -L "$library" "$out/lib/$name"
  fi
done
echo "$root" >"$out/source_dir"
# The build directory's path inside the source tree (as the binaries name it).
realpath --relative-to="$root" "$build" >"$out/build_name"
git -C "$root" rev-parse HEAD >"$out/commit" 2>/dev/null || echo unknown >"$out/commit"
echo "gpu-bundle: $(du -sh "$out" | cut -f1) in $out ($(ls "$out/lib" | wc -l) libraries)"
