# slotserve container image: a build stage that runs the project's own scripts (the same
# recipe CI runs) and a slim runtime stage with only the shared libraries the binaries load.
#
# CPU image (default):
#   docker build -t slotserve .
# GPU image: the NVIDIA CUDA devel/runtime images are Ubuntu-based; Ubuntu 24.04 carries the
# same library generations as Debian 12 (gRPC 1.51, protobuf 3.21, abseil 20220623), so the
# dependency script works unchanged and CMake turns CUDA on because nvcc is found:
#   docker build -t slotserve:cuda \
#     --build-arg BUILD_IMAGE=nvidia/cuda:12.6.3-devel-ubuntu24.04 \
#     --build-arg RUNTIME_IMAGE=nvidia/cuda:12.6.3-runtime-ubuntu24.04 .
# See docs/DEPLOY.md for what has been verified of each variant.

ARG BUILD_IMAGE=debian:bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

# ---------------------------------------------------------------------------------------------
FROM ${BUILD_IMAGE} AS build
# nvcc picks the GPU architectures; the default covers A100 (80) and H100/H200 (90).
ARG CUDA_ARCHITECTURES="80;90"
ENV DEBIAN_FRONTEND=noninteractive \
    SLOTSERVE_SKIP_DEPLOY_CHECKS=1
WORKDIR /src
# install-deps.sh first, on its own, so the package layer is cached across source changes.
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
# build.sh runs install-deps.sh again (a no-op now) and builds Release into build/ with Ninja.
# The server's built-in default model is where the runtime stage puts it, so arguments that
# replace CMD without --model still find it.
RUN SLOTSERVE_BUILD_DIR=/src/build scripts/build.sh \
      -DSLOTSERVE_BUILD_TESTS=OFF -DSLOTSERVE_BUILD_BENCH=OFF \
      -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHITECTURES}" \
      -DSLOTSERVE_TRAINED_MODEL_DIR=/opt/slotserve/model \
      -DSLOTSERVE_DEFAULT_MODEL_DIR=/opt/slotserve/model \
 && scripts/make-default-model.sh
# Stage exactly what the runtime needs under /staging, and the list of packages that own the
# shared libraries the binaries load (computed, so the Debian and Ubuntu bases both work).
RUN deploy/docker/stage-runtime.sh /src/build /staging

# ---------------------------------------------------------------------------------------------
FROM ${RUNTIME_IMAGE} AS runtime
ARG DEBIAN_FRONTEND=noninteractive
COPY --from=build /staging/runtime-packages.txt /tmp/runtime-packages.txt
# On Debian 12: libabsl20220623 libbrotli1 libc-ares2 libcpp-httplib0.11 libgfortran5 libgrpc29
# libhiredis0.14 libopenblas0-pthread libprometheus-cpp-core1.0 libquadmath0 libre2-9
# libsentencepiece0 libssl3 zlib1g (plus libc6, libgcc-s1, libstdc++6). gRPC C++, protobuf and prometheus-cpp's pull exposer are linked from
# Debian's static archives, so they need no runtime package. docs/DEPLOY.md has the details.
RUN apt-get update \
 && apt-get install -y --no-install-recommends $(cat /tmp/runtime-packages.txt) \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt \
 && groupadd --system --gid 10001 slotserve \
 && useradd --system --uid 10001 --gid slotserve --home-dir /opt/slotserve \
      --shell /usr/sbin/nologin slotserve
COPY --from=build /staging/bin/ /usr/local/bin/
COPY --from=build /staging/model/ /opt/slotserve/model/
# Fail the image build, not the first start, when a shared library is missing.
RUN for b in /usr/local/bin/slotserve-server /usr/local/bin/slotserve-cli; do \
      if ldd "$b" | grep 'not found'; then echo "$b: missing shared libraries" >&2; exit 1; fi; \
    done

USER 10001:10001
WORKDIR /opt/slotserve
# 50051: gRPC (slotserve.v1 + grpc.health.v1 + reflection); 9464: Prometheus metrics.
EXPOSE 50051 8000 9464
# Six failures (a minute) before "unhealthy" covers loading the bundled model. (No
# --start-period: dockerfilelint 1.8 mis-parses hyphenated options and would flag it.)
HEALTHCHECK --interval=10s --timeout=3s --retries=6 \
  CMD ["slotserve-cli", "--server", "127.0.0.1:50051", "health"]
# SIGTERM drains: health goes NOT_SERVING, running requests finish, then exit 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["slotserve-server"]
CMD ["--model", "/opt/slotserve/model", "--listen", "0.0.0.0:50051", \
     "--http-listen", "0.0.0.0:8000", "--metrics-listen", "0.0.0.0:9464", "--drain-timeout", "30s"]
