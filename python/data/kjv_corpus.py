"""The King James Bible as a corpus of books, and the fixed train / validation / test split.

The text comes from Debian's `bible-kjv-text` package (data file /usr/lib/bible.data), read
through the `bible` program of the `bible-kjv` package, which decompresses it. Each book is one
document: its verses in order, verse and chapter numbers dropped, one verse per line.

The split is by book, so no verse of a held-out book is ever seen in training. Validation and
test each take a few whole books from both testaments and from several genres (narrative,
prophecy, gospel, letter); everything else is training text.
"""

from __future__ import annotations

import re
import subprocess
from typing import Dict, List

# Held-out books (names exactly as the `bible` program prints them in chapter headings).
VALIDATION_BOOKS = ("Esther", "Joel", "Ephesians")
TEST_BOOKS = ("Ruth", "Jonah", "Mark", "Philippians")
SPLITS = ("train", "valid", "test")

# The whole Bible, first verse to last; -l with a huge width turns line wrapping off.
_BIBLE_COMMAND = ["bible", "-l1000000", "Gen1:1-Rev22:21"]
_CHAPTER_HEADING = re.compile(r"^(?P<book>\S.*?) (?P<chapter>\d+)$")
_VERSE_LINE = re.compile(r"^\s+(?P<verse>\d+) (?P<text>.*)$")
_EXPECTED_BOOKS = 66


def read_books() -> Dict[str, List[str]]:
    """Returns {book name: [verse text, ...]} in canonical book order."""
    try:
        dump = subprocess.run(_BIBLE_COMMAND, check=True, capture_output=True, text=True).stdout
    except FileNotFoundError:
        raise SystemExit("kjv_corpus: the `bible` program is missing; install the Debian "
                         "packages bible-kjv and bible-kjv-text (scripts/install-deps.sh)")
    books: Dict[str, List[str]] = {}
    current = None
    for line_number, line in enumerate(dump.splitlines(), start=1):
        if not line.strip():
            continue
        heading = _CHAPTER_HEADING.match(line)
        if heading:
            current = books.setdefault(heading.group("book"), [])
            continue
        verse = _VERSE_LINE.match(line)
        if verse is None or current is None:
            raise SystemExit(f"kjv_corpus: line {line_number} of `{' '.join(_BIBLE_COMMAND)}` "
                             f"is neither a chapter heading nor a verse: {line!r}")
        current.append(verse.group("text").strip())
    if len(books) != _EXPECTED_BOOKS:
        raise SystemExit(f"kjv_corpus: expected {_EXPECTED_BOOKS} books, got {len(books)}")
    for name in VALIDATION_BOOKS + TEST_BOOKS:
        if name not in books:
            raise SystemExit(f"kjv_corpus: held-out book {name!r} not found in the text")
    return books


def split_of(book: str) -> str:
    if book in TEST_BOOKS:
        return "test"
    if book in VALIDATION_BOOKS:
        return "valid"
    return "train"
