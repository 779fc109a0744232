#!/usr/bin/env bash
# Collects what the runtime image needs from a finished build:
#   STAGING/bin/slotserve-server, STAGING/bin/slotserve-cli   the stripped binaries
#   STAGING/model/                                           the default model directory
#   STAGING/runtime-packages.txt                             packages owning their shared libs
# Usage: stage-runtime.sh BUILD_DIR STAGING_DIR
# The package list is computed from ldd + dpkg rather than written by hand, so the same
# Dockerfile works on Debian 12 and on the Ubuntu-based CUDA images, whose package names differ.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR STAGING_DIR" >&2
  exit 2
fi
build_dir=$1
staging=$2
root=$(cd "$(dirname "$0")/../.." && pwd)

mkdir -p "$staging/bin" "$staging/model"
for name in slotserve-server slotserve-cli; do
  found=$(find "$build_dir" -type f -name "$name" -perm -u+x | head -n 1)
  if [ -z "$found" ]; then
    echo "stage-runtime: $name not found under $build_dir (was the server built?)" >&2
    exit 1
  fi
  install -m 0755 -s "$found" "$staging/bin/$name"
done

# The default model, chosen as slotserve-server chooses it when --model is not given: the
# trained demo model when it is in the tree, else what scripts/make-default-model.sh wrote.
# Both places are read from server/CMakeLists.txt, so the two never disagree.
default_of() {
  sed -n "s|^set($1 \${PROJECT_SOURCE_DIR}/\([^ ]*\) CACHE.*|\1|p" \
    "$root/server/CMakeLists.txt"
}
model_dir=${SLOTSERVE_DEFAULT_MODEL_DIR:-}
if [ -z "$model_dir" ]; then
  trained=$(default_of SLOTSERVE_TRAINED_MODEL_DIR)
  fallback=$(default_of SLOTSERVE_DEFAULT_MODEL_DIR)
  if [ -z "$trained" ] || [ -z "$fallback" ]; then
    echo "stage-runtime: cannot read SLOTSERVE_TRAINED_MODEL_DIR / SLOTSERVE_DEFAULT_MODEL_DIR" \
         "from server/CMakeLists.txt; set SLOTSERVE_DEFAULT_MODEL_DIR" >&2
    exit 1
  fi
  # The fallback lives in the source tree's build/; this build may be elsewhere.
  for candidate in "$root/$trained" "$root/$fallback" "$build_dir/${fallback#build/}"; do
    if [ -f "$candidate/config.json" ]; then model_dir=$candidate; break; fi
  done
fi
if [ -z "$model_dir" ] || [ ! -f "$model_dir/config.json" ]; then
  echo "stage-runtime: no default model (no config.json in $root/${trained:-?}," \
       "$root/${fallback:-?} or $build_dir; run scripts/make-default-model.sh or set" \
       "SLOTSERVE_DEFAULT_MODEL_DIR)" >&2
  exit 1
fi
echo "stage-runtime: default model $model_dir"
for f in config.json model.safetensors tokenizer.model; do
  if [ ! -f "$model_dir/$f" ]; then
    echo "stage-runtime: $model_dir/$f missing; a model directory needs config.json," \
         "model.safetensors and tokenizer.model" >&2
    exit 1
  fi
done
cp -R "$model_dir/." "$staging/model/"

# Every shared library the binaries load, mapped to the package that ships it. dpkg -S wants
# the path as installed, so try both the resolved path and the one ldd printed (usrmerge).
libs=$(ldd "$staging/bin/slotserve-server" "$staging/bin/slotserve-cli" |
  awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u)
packages=()
for lib in $libs; do
  owner=""
  for candidate in "$lib" "$(readlink -f "$lib")" "${lib#/usr}" "/usr$lib"; do
    if owner=$(dpkg -S "$candidate" 2>/dev/null | head -n 1 | cut -d: -f1); then
      [ -n "$owner" ] && break
    fi
  done
  if [ -z "$owner" ]; then
    echo "stage-runtime: no package owns $lib; the runtime image cannot install it" >&2
    exit 1
  fi
  packages+=("$owner")
done
printf '%s\n' "${packages[@]}" | sort -u > "$staging/runtime-packages.txt"
echo "stage-runtime: runtime packages: $(tr '\n' ' ' < "$staging/runtime-packages.txt")"
