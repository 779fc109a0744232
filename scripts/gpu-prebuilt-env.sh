#!/usr/bin/env bash
# Sourced by scripts/gpu-check.sh --prebuilt: makes a bundle from scripts/gpu-bundle.sh run on
# this GPU machine.
#   source scripts/gpu-prebuilt-env.sh BUNDLE_DIR CHECKOUT_DIR
# - PATH: the bundle's programs first (spm_train);
# - LD_LIBRARY_PATH: the bundle's libraries, then this machine's cuBLAS and CUDA runtime (from
#   the toolkit, else from an installed nvidia-cublas Python wheel);
# - the test binaries open their data by the absolute source path of the build machine
#   (BUNDLE_DIR/source_dir) and run slotserve-generate from its build path: where those paths
#   do not exist here they become links to this checkout and to the bundle.
bundle=$1
checkout=$2
cuda_dirs=""
for pattern in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
  /usr/local/cuda-*/lib64 /usr/lib/x86_64-linux-gnu \
  /opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib \
  /usr/local/lib/python3*/dist-packages/nvidia/*/lib; do
  for dir in $pattern; do
    if [ -e "$dir/libcublasLt.so.13" ] || [ -e "$dir/libcudart.so.13" ]; then
      cuda_dirs=$cuda_dirs:$dir
    fi
  done
done
export LD_LIBRARY_PATH=$bundle/lib$cuda_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$bundle/bin:$PATH
echo "gpu-prebuilt-env: LD_LIBRARY_PATH=$LD_LIBRARY_PATH"

link_if_missing() {  # link_if_missing PATH TARGET
  if [ ! -e "$1" ]; then
    mkdir -p "$(dirname "$1")"
    ln -s "$2" "$1"
    echo "gpu-prebuilt-env: linked $1 -> $2"
  fi
}
source_dir=$(cat "$bundle/source_dir")
link_if_missing "$source_dir" "$checkout"
link_if_missing "$source_dir/$(cat "$bundle/build_name")" "$bundle"
if ldd "$bundle/server/slotserve-server" | grep 'not found'; then
  echo "gpu-prebuilt-env: slotserve-server misses the libraries above" >&2
  return 1
fi
