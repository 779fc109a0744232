"""Prints the oracle test's Bible verses as a JSON array: every 29th verse of the KJV, the
World English Bible and the Reina-Valera 1909 (Debian's SWORD modules, read through
python/data/sword_bible.py). With no SWORD bindings or modules it prints [] and says so on
stderr; oracle_test.mjs then fails under CI=true."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "python"))

try:
    from data import sword_bible
    every = sword_bible.references("KJV")[::29]
    refs = [ref for ref, _ in every]
    verses = []
    for module in (sword_bible.KJV_MODULE, sword_bible.ENGLISH_MODULE, sword_bible.SPANISH_MODULE):
        texts = sword_bible.read_module(module, refs)
        verses += [texts[ref] for ref in refs if texts.get(ref)]
except (Exception, SystemExit) as error:  # no python3-sword, or a module missing
    print(f"make_corpus: no SWORD Bibles ({error})", file=sys.stderr)
    verses = []
json.dump(verses, sys.stdout, ensure_ascii=False)
