"""Verse texts of the Bibles Debian ships as SWORD modules, as plain text.

The modules (sword-text-sparv, sword-text-web, sword-text-kjv) are OSIS-encoded: each verse's
raw entry carries Strong's numbers (<w lemma=...>), footnotes (<note>), editors' headings
(<title> without canonical="true"), speaker labels, poetry line and paragraph milestones and,
after a book's last verse, whatever follows the book's end marker (the WEB module appends its
glossary to Revelation 22:21). `osis_to_text` keeps only the words of the verse; it is pure and
needs no SWORD installation, so it is tested on snippets copied from the modules.

`read_module` walks the KJV versification's verses (the 66 protocanonical books) and reads each
from a module through Debian's python3-sword bindings. Every module is addressed by the same
OSIS reference (Gen.1.1); a module in another versification (the WEB module declares NRSVA)
parses it in its own system, and a reference that its system does not have reads as missing.
"""

from __future__ import annotations

import html
import re
from typing import Dict, Iterator, List, Tuple

# Module names as /usr/share/sword/mods.d/*.conf spell them (Debian 12's packages).
SPANISH_MODULE = "spaRV1909eb"   # sword-text-sparv: Reina-Valera 1909
ENGLISH_MODULE = "engWEB2015eb"  # sword-text-web: World English Bible
KJV_MODULE = "engKJV2006eb"      # sword-text-kjv: King James Version

Reference = Tuple[str, int, int]  # (OSIS book, chapter, verse)

# Elements whose content is not verse text: footnotes (with their cross-references and
# variant readings), editors' headings, and speaker labels (Song of Songs in the WEB).
# Canonical titles (the psalm superscriptions) are verse text: the Spanish module prints them
# inline at the start of verse 1, so the English side keeps them too.
_DROPPED_ELEMENTS = re.compile(
    r"<note\b[^>]*>.*?</note>"
    r"|<title\b(?![^>]*\bcanonical=\"true\")[^>]*>.*?</title>"
    r"|<speaker\b[^>]*>.*?</speaker>", re.S)
# The end of a book (<div ... eID=... type="book"/>, attributes in either order): what follows
# belongs to no verse.
_BOOK_END = re.compile(r"<div\b(?=[^>]*\btype=\"book\")(?=[^>]*\beID=)[^>]*/>")
# Tags that separate text (line, paragraph and chapter milestones, list items, the place of a
# dropped note): when one sits between two letters, the letters belong to two words. The
# Reina-Valera module's added words (<transChange>) lost their spaces ~300 times
# (`también</transChange><w>bdelio`, Gen 2:12), so their edges separate words too...
_SEPARATING_TAG = re.compile(
    r"</?(?:l|lg|lb|div|p|milestone|chapter|item|list|title|transChange)\b[^>]*>")
# ...except an added enclitic pronoun, which belongs to the verb before it
# (`púso<transChange>les</transChange>` is `púsoles`, Ps 148:6).
_ADDED_ENCLITIC = re.compile(
    r"(?<=\w)(?:</w>)?<transChange\b[^>]*>(lo|la|los|las|le|les|me|te|se|nos|os)</transChange>")
_ANY_TAG = re.compile(r"<[^>]*>")
_SEPARATOR = "\x00"
# A word or closing punctuation, then a separator, then a word: two words.
_WORDS_SPLIT_BY_SEPARATOR = re.compile(r"(?<=[\w,.;:!?)\]”’])\x00+(?=\w)")
_WHITESPACE = re.compile(r"\s+")


def osis_to_text(raw: str) -> str:
    """The plain text of one verse's OSIS entry: words and punctuation only, whitespace
    collapsed to single spaces, entities decoded. Empty when the entry holds no verse text."""
    text = _BOOK_END.split(raw, maxsplit=1)[0]
    text = _DROPPED_ELEMENTS.sub(_SEPARATOR, text)
    text = _ADDED_ENCLITIC.sub(lambda m: m.group(1) + _SEPARATOR, text)
    text = _SEPARATING_TAG.sub(_SEPARATOR, text)
    text = _ANY_TAG.sub("", text)
    # WEB Gen 1:1 reads `God</w><note>...</note><w>created` and Phil 1:1
    # `Christ</w>,<note>...</note><w>to`: the note was the only separator.
    text = _WORDS_SPLIT_BY_SEPARATOR.sub(" ", text).replace(_SEPARATOR, "")
    return _WHITESPACE.sub(" ", html.unescape(text)).strip()


def _sword():
    try:
        import Sword  # pylint: disable=import-outside-toplevel
    except ImportError as e:
        raise SystemExit(f"sword_bible: the SWORD Python bindings are missing ({e}); install "
                         "Debian's python3-sword (scripts/install-deps.sh) and run with "
                         "/usr/bin/python3") from e
    return Sword


def references(versification: str = "KJV") -> List[Tuple[Reference, str]]:
    """Every verse of a versification system, in canonical order, with its book's long name
    (for KJV as the `bible` program of bible-kjv prints it, e.g. "Ruth")."""
    sword = _sword()
    key = sword.VerseKey()
    key.setVersificationSystem(versification)
    key.setAutoNormalize(False)
    verses = []
    for testament in (1, 2):
        key.setTestament(testament)
        for book in range(1, key.getBookMax() + 1):
            key.setBook(book)
            key.setChapter(1)
            key.setVerse(1)
            osis_book, long_name = key.getOSISBookName(), key.getBookName()
            for chapter in range(1, key.getChapterMax() + 1):
                key.setChapter(chapter)
                key.setVerse(1)
                for verse in range(1, key.getVerseMax() + 1):
                    verses.append(((osis_book, chapter, verse), long_name))
    return verses


_MANAGER = []  # the one SWMgr: its modules die with it, so it lives as long as the process


def _module(name: str):
    if not _MANAGER:
        _MANAGER.append(_sword().SWMgr())
    module = _MANAGER[0].getModule(name)
    if module is None:
        raise SystemExit(f"sword_bible: SWORD module {name} is not installed (Debian packages "
                         "sword-text-sparv, sword-text-web, sword-text-kjv; "
                         "scripts/install-deps.sh)")
    return module


def read_raw(name: str, references: List[Reference]) -> Iterator[Tuple[Reference, str | None]]:
    """(reference, raw OSIS entry) for each reference; None where the module's versification
    has no such verse (its parser moved the key elsewhere)."""
    sword = _sword()
    module = _module(name)
    for reference in references:
        book, chapter, verse = reference
        module.setKey(sword.SWKey(f"{book}.{chapter}.{verse}"))
        landed = sword.VerseKey.castTo(module.getKey())
        if (landed.getOSISBookName(), landed.getChapter(), landed.getVerse()) != reference:
            yield reference, None
            continue
        yield reference, module.getRawEntry()


def read_module(name: str, references: List[Reference]) -> Dict[Reference, str | None]:
    """{reference: plain verse text} (None: the module's versification lacks the verse)."""
    return {reference: (None if raw is None else osis_to_text(raw))
            for reference, raw in read_raw(name, references)}


def module_conf(name: str, conf_dir: str = "/usr/share/sword/mods.d") -> Dict[str, str]:
    """The module's .conf entries (the last value of a repeated key), for the data card."""
    entries: Dict[str, str] = {}
    with open(f"{conf_dir}/{name}.conf", encoding="utf-8") as conf:
        for line in conf:
            if "=" in line and not line.startswith("#"):
                key, value = line.rstrip("\n").split("=", 1)
                entries[key] = value
    return entries
