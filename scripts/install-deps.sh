#!/usr/bin/env bash
# Installs every Debian 12 package slotserve needs to build, test, train and benchmark.
# Idempotent: packages already present are skipped, so a second run costs one dpkg query.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates curl
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  prometheus-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev
  # The HTTP API and the metrics endpoint (server/http/).
  libcpp-httplib-dev
  libsentencepiece-dev sentencepiece libopenblas-dev nlohmann-json3-dev libssl-dev
  # Unicode data for tokenizer.json's normalizers and word patterns (engine/hf_unicode.cc).
  libicu-dev
  # The TLS tests make their certificates with the openssl command at run time.
  openssl
  # The shared session store (--session-store redis://): the client library, and the server
  # its integration tests start.
  libhiredis-dev redis-server
  python3 python3-torch python3-numpy python3-sentencepiece python3-protobuf
  # The Python client (clients/python; its stubs come from protoc + grpc_python_plugin above).
  python3-grpcio
  # The chat-template oracle (tests/hf_oracle): jinja2, the library Hugging Face renders with.
  python3-jinja2
  bible-kjv bible-kjv-text
  # The Spanish→English translation corpus (scripts/make-translation-corpus.sh): the
  # Reina-Valera 1909, World English Bible and KJV SWORD modules, read with python3-sword
  # (diatheke, the modules' command-line reader, to look at a verse by hand).
  sword-text-sparv sword-text-web sword-text-kjv python3-sword diatheke
  # Corpus BLEU of the translation models (python/evaluate_translation.py).
  python3-nltk
  # The fuzz targets (tests/fuzz, scripts/fuzz.sh): clang with libFuzzer and the sanitizers.
  clang libclang-rt-14-dev
  # Benchmark plots (scripts/bench.sh) and profiles of missed targets (docs/PERFORMANCE.md).
  gnuplot-nox valgrind
)

# Deploy checks (tests/deploy): yamllint, promtool (prometheus), the Compose schema
# (docker-compose), Kubernetes models (python3-kubernetes), plus npm-only linters when npm
# is present. The image's build stage sets SLOTSERVE_SKIP_DEPLOY_CHECKS=1: it runs no tests.
if [ "${SLOTSERVE_SKIP_DEPLOY_CHECKS:-0}" != 1 ]; then
  packages+=(yamllint prometheus docker-compose python3-yaml python3-kubernetes)
  "$(dirname "$0")/../tests/deploy/node-tools/install.sh" || true
  # The openai npm SDK for the HTTP API's client test (tests/integration/openai_sdk).
  "$(dirname "$0")/../tests/integration/openai_sdk/install.sh" || true
  # Real tokenizer.json files and transformers.js' tokenizer, the tokenizer oracle
  # (tests/unit/hf_tokenizer).
  "$(dirname "$0")/../tests/unit/hf_tokenizer/install.sh" || true
  # Real tokenizer files and chat templates of Hub checkpoints for the oracle tests
  # (tests/hf_oracle).
  "$(dirname "$0")/../tests/hf_oracle/install.sh" || true
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
