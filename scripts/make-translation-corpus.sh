#!/usr/bin/env bash
# Builds the Spanish→English Bible translation corpus (issue 13): Reina-Valera 1909 → World
# English Bible, aligned verse by verse from Debian's SWORD modules, split by book, with a joint
# SentencePiece model and source/target token ids. Data card: python/data/BIBLE_PARALLEL_CARD.md.
#
#   scripts/make-translation-corpus.sh [--out DIR] [--vocab-size N]
#
# Default output: build-training/translation/ (regenerated, never committed). Installs the
# Debian packages it needs first (scripts/install-deps.sh; set SLOTSERVE_SKIP_INSTALL=1 to
# skip). Debian's /usr/bin/python3: the SWORD bindings (python3-sword) are a Debian package.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ "${SLOTSERVE_SKIP_INSTALL:-0}" != 1 ]; then
  "$root/scripts/install-deps.sh"
fi
exec /usr/bin/python3 "$root/python/data/bible_parallel_corpus.py" "$@"
