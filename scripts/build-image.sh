#!/usr/bin/env bash
# Builds the slotserve container image without a Docker daemon or registry, then proves the
# runtime stage is complete by running the binaries inside the image's file system.
#
#   1. debootstrap --variant=minbase bookworm (cached under /var/tmp) and import it into
#      podman as docker.io/library/debian:bookworm and :bookworm-slim (the Dockerfile's
#      default bases; minbase is what -slim is, less the docs and locales it strips);
#   2. podman build --pull=never --isolation=chroot --format docker -t slotserve .
#   3. podman create + podman export into a folder, then chroot into it as the image's user
#      and run slotserve-server --help and slotserve-cli --help (podman run is not available
#      on these machines), after ldd finds every shared library;
#   4. start the image's server (no --model: its built-in default is the bundled model) in
#      that file system on loopback, ask it for health and a short generation with the
#      image's CLI, count its metric families, and SIGTERM it (must drain and exit 0).
#
# Needs root, podman and debootstrap (apt-get install podman debootstrap), network access to a
# Debian mirror, and time: the build stage compiles the whole project. Not part of CI.
# Usage: scripts/build-image.sh [extra podman build arguments...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${SLOTSERVE_IMAGE_CACHE:-/var/tmp/slotserve-image}
image=${SLOTSERVE_IMAGE:-slotserve}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

for tool in podman debootstrap; do
  if ! command -v "$tool" >/dev/null; then
    echo "build-image: $tool not found; apt-get install podman debootstrap" >&2
    exit 1
  fi
done
mkdir -p "$cache"

# 1. The base images, from Debian's own archive.
rootfs=$cache/bookworm-minbase
if [ ! -f "$rootfs/.complete" ]; then
  rm -rf "$rootfs"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror"
  touch "$rootfs/.complete"
fi
if ! podman image exists docker.io/library/debian:bookworm; then
  tar -C "$rootfs" --exclude=./.complete -c . |
    podman import --change 'CMD ["bash"]' - docker.io/library/debian:bookworm
fi
podman tag docker.io/library/debian:bookworm docker.io/library/debian:bookworm-slim

# 2. The image itself. SLOTSERVE_IMAGE_FROM_HEAD=1 builds the committed tree (git archive
# HEAD) instead of the working tree, which may hold someone's half-written change.
context=$root
if [ "${SLOTSERVE_IMAGE_FROM_HEAD:-0}" = 1 ]; then
  context=$cache/context
  rm -rf "$context"
  mkdir -p "$context"
  git -C "$root" archive HEAD | tar -C "$context" -x
  echo "build-image: building commit $(git -C "$root" rev-parse --short HEAD)"
fi
# --format docker: the OCI image format has no HEALTHCHECK, podman would drop it.
podman build --pull=never --isolation=chroot --format docker --layers -t "$image" "$@" "$context" \
  2>&1 | tee "$cache/build.log"
podman image inspect --format \
  'user {{.Config.User}}, entrypoint {{.Config.Entrypoint}}, cmd {{.Config.Cmd}}, ports {{.Config.ExposedPorts}}, healthcheck {{.Config.Healthcheck.Test}}' \
  "$image"

# 3. Run the binaries in the exported runtime file system, as the image's user.
export_dir=$cache/export
rm -rf "$export_dir"
mkdir -p "$export_dir"
container=$(podman create "$image")
trap 'podman rm -f "$container" >/dev/null 2>&1 || true' EXIT
podman export "$container" | tar -C "$export_dir" -x
user=$(podman image inspect --format '{{.Config.User}}' "$image")
echo "build-image: image user $user"
for binary in slotserve-server slotserve-cli; do
  if chroot "$export_dir" ldd "/usr/local/bin/$binary" | grep 'not found'; then
    echo "build-image: $binary has unresolved shared libraries in the image" >&2
    exit 1
  fi
  log=$cache/$binary-help.txt
  echo "build-image: chroot --userspec=$user $export_dir /usr/local/bin/$binary --help"
  status=0
  chroot --userspec="$user" "$export_dir" "/usr/local/bin/$binary" --help > "$log" 2>&1 ||
    status=$?
  # Usage output and exit 0 means the binary loaded and ran; a missing library is exit 127
  # with a loader message instead.
  if [ "$status" -ne 0 ] || ! grep -q -- '--' "$log"; then
    cat "$log" >&2
    echo "build-image: $binary --help failed in the image (exit $status)" >&2
    exit 1
  fi
  echo "build-image: $binary --help: exit $status, $(wc -l < "$log") lines of usage"
done

# 4. Serve for real inside the image's file system: the bundled model, as the image's user, on
# loopback (chroot shares this machine's network), asked for health and a generation by the
# image's own CLI and for a completion and a chat by curl over the HTTP API, then SIGTERM must
# drain and exit 0.
mount -t proc proc "$export_dir/proc"
trap 'umount "$export_dir/proc" 2>/dev/null || true; podman rm -f "$container" >/dev/null 2>&1 || true' EXIT
# Fixed ports below the kernel's ephemeral range (32768-60999 on Debian), so that no client
# connection of another job on this machine can hold one of them.
grpc_port=25051 metrics_port=25464 http_port=25800
# No --model: the built-in default must be the image's bundled model.
chroot --userspec="$user" "$export_dir" /usr/local/bin/slotserve-server \
  --listen=127.0.0.1:$grpc_port --metrics-listen=127.0.0.1:$metrics_port \
  --http-listen=127.0.0.1:$http_port \
  --backend=cpu --drain-timeout=5s > "$cache/server.log" 2>&1 &
server_pid=$!
healthy=0
for _ in $(seq 1 120); do
  if chroot --userspec="$user" "$export_dir" /usr/local/bin/slotserve-cli \
       --server 127.0.0.1:$grpc_port health; then
    healthy=1
    break
  fi
  sleep 1
done
generated=0
if [ "$healthy" = 1 ] && chroot --userspec="$user" "$export_dir" /usr/local/bin/slotserve-cli \
     --server 127.0.0.1:$grpc_port generate "In the beginning" --max-new-tokens 8 --seed 1; then
  generated=1
fi
# The OpenAI-compatible API: a completion, and a chat through the model's chat template.
http_answered=0
if [ "$healthy" = 1 ] &&
   curl -sf http://127.0.0.1:$http_port/v1/completions -H 'Content-Type: application/json' \
     -d '{"prompt": "In the beginning", "max_tokens": 8, "seed": 1}' \
     > "$cache/http-completion.json" &&
   curl -sf http://127.0.0.1:$http_port/v1/chat/completions -H 'Content-Type: application/json' \
     -d '{"messages": [{"role": "user", "content": "Who made the light?"}], "max_tokens": 8}' \
     > "$cache/http-chat.json" &&
   grep -q '"text"' "$cache/http-completion.json" &&
   grep -q '"assistant"' "$cache/http-chat.json"; then
  http_answered=1
  cat "$cache/http-completion.json" "$cache/http-chat.json"
fi
families=$(curl -s http://127.0.0.1:$metrics_port/metrics | grep -c '^# TYPE slotserve_' || true)
kill -TERM "$server_pid"
exit_code=0
wait "$server_pid" || exit_code=$?
cat "$cache/server.log"
echo "build-image: in-image server: healthy=$healthy, generated=$generated," \
     "HTTP answered=$http_answered, $families slotserve metric families," \
     "exit $exit_code after SIGTERM"
if [ "$healthy" != 1 ] || [ "$generated" != 1 ] || [ "$http_answered" != 1 ] ||
   [ "$families" -eq 0 ] || [ "$exit_code" != 0 ]; then
  echo "build-image: the server did not serve from the image" >&2
  exit 1
fi
podman image ls "$image"
