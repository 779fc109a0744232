#!/usr/bin/env bash
# Installs the official openai npm SDK (pinned by package-lock.json) into node_modules beside
# this script, for sdk_test.mjs. scripts/install-deps.sh runs it. Needs npm and the npm
# registry; without them it says so and returns 0: the SDK test then reports SKIPPED, or
# FAILS under CI=true, where the SDK must be there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v npm >/dev/null 2>&1; then
  echo "openai-sdk: npm not found; the openai SDK test will be skipped (fails under CI=true)"
  exit 0
fi
pinned=$(sed -n 's/.*"openai": "\([^"]*\)".*/\1/p' "$here/package.json")
if grep -qs "\"version\": \"$pinned\"" "$here/node_modules/openai/package.json"; then
  echo "openai-sdk: up to date in $here/node_modules"
  exit 0
fi
if ! (cd "$here" && npm ci --no-audit --no-fund --loglevel=error); then
  echo "openai-sdk: npm ci failed (no registry access?); the openai SDK test will be skipped" \
       "(fails under CI=true)" >&2
  exit 0
fi
echo "openai-sdk: installed into $here/node_modules"
