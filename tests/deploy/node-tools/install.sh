#!/usr/bin/env bash
# Installs the npm-only linters the deploy tests use (pinned by package-lock.json):
# kubernetes-models (JSON-schema validation of current Kubernetes API versions, incl. the
# Prometheus Operator's ServiceMonitor) and dockerfilelint (Debian has no Dockerfile linter).
# Target: ${SLOTSERVE_NODE_TOOLS:-/opt/slotserve-node-tools}. Needs npm and the npm registry;
# without them it says so and returns 0, and the tests that need these tools report SKIPPED.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=${SLOTSERVE_NODE_TOOLS:-/opt/slotserve-node-tools}

if ! command -v npm >/dev/null 2>&1; then
  echo "node-tools: npm not found; the deploy tests that need kubernetes-models and" \
       "dockerfilelint will be skipped"
  exit 0
fi
if [ -f "$prefix/package-lock.json" ] && cmp -s "$here/package-lock.json" "$prefix/package-lock.json" \
   && [ -d "$prefix/node_modules/kubernetes-models" ]; then
  echo "node-tools: up to date in $prefix"
  exit 0
fi
mkdir -p "$prefix"
cp "$here/package.json" "$here/package-lock.json" "$prefix/"
if ! (cd "$prefix" && npm ci --no-audit --no-fund --loglevel=error); then
  echo "node-tools: npm ci failed (no registry access?); the deploy tests that need these" \
       "tools will be skipped" >&2
  rm -f "$prefix/package-lock.json"
  exit 0
fi
echo "node-tools: installed into $prefix"
