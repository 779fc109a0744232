#!/usr/bin/env python3
"""Builds the Spanish→English translation corpus: the Reina-Valera 1909 (source) and the World
English Bible (target) aligned verse by verse from Debian's SWORD modules, split by book, a
joint SentencePiece model trained on the training split, and every split encoded to ids.

Writes into --out (default build-training/translation):
  {train,valid,test}.tsv        book<TAB>chapter<TAB>verse<TAB>spanish<TAB>english, one aligned
                                verse per row in canonical order (book: OSIS name, e.g. Ruth)
  {train,valid,test}.kjv.txt    the KJV text of the same rows, line for line (a second
                                English reference)
  spm-train.txt                 the tokenizer's input: the training split's Spanish verses,
                                then its English verses, one per line
  tokenizer.model / .vocab      joint SentencePiece unigram model (unk 0, bos 1, eos 2, no
                                pad, byte fallback), trained inside --out from relative names
  {train,valid,test}.src.ids    Spanish token ids, one verse per line, ending with eos (2), no
                                BOS (docs/ARCHITECTURE.md "Encoder–decoder models": a text source
                                ends with eos_id)
  {train,valid,test}.tgt.ids    English token ids, one verse per line, ending with eos; the
                                trainer puts decoder_start_id in front
  manifest.json                 books per split, verse and token counts, what was dropped and
                                why, the versification check, tokenizer settings

The split is the decoder-only KJV corpus's (kjv_corpus.py): the same held-out books, so no
verse of a validation or test book is in training here or in the bundled KJV models.
Deterministic: the same packages give byte-identical outputs.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import sys
import time
from pathlib import Path
from typing import Dict, Iterable, List, NamedTuple, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kjv_corpus  # noqa: E402
import prepare_corpus  # noqa: E402
import sword_bible  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
SPM_TRAIN_TEXT = "spm-train.txt"
# 8000 pieces for two languages: the KJV-only tokenizer has 4000 for ~1M tokens of one
# language; two languages with different morphology share few pieces, so each keeps about as
# many as the monolingual model had, and verse-sized sources stay ~40 tokens long.
DEFAULT_VOCAB_SIZE = 8000


class VersePair(NamedTuple):
    book: str      # OSIS name
    chapter: int
    verse: int
    spanish: str
    english: str


def write_tsv(path: Path, pairs: Iterable[VersePair]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as f:
        for p in pairs:
            for field in (p.book, p.spanish, p.english):
                if "\t" in field or "\n" in field:
                    raise ValueError(f"{p.book} {p.chapter}:{p.verse}: tab or newline in text")
            f.write(f"{p.book}\t{p.chapter}\t{p.verse}\t{p.spanish}\t{p.english}\n")


def read_tsv(path: Path) -> List[VersePair]:
    pairs = []
    with path.open(encoding="utf-8", newline="\n") as f:
        for number, line in enumerate(f, start=1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 5:
                raise ValueError(f"{path}:{number}: expected 5 tab-separated fields, got "
                                 f"{len(fields)}")
            pairs.append(VersePair(fields[0], int(fields[1]), int(fields[2]), fields[3],
                                   fields[4]))
    return pairs


def split_by_book(pairs: Iterable[VersePair], long_names: Dict[str, str]
                  ) -> Dict[str, List[VersePair]]:
    """{split: pairs in input order}; a book's split comes from its long name (kjv_corpus)."""
    missing = [b for b in kjv_corpus.VALIDATION_BOOKS + kjv_corpus.TEST_BOOKS
               if b not in long_names.values()]
    if missing:
        raise SystemExit(f"bible_parallel_corpus: held-out books {missing} not in the modules")
    splits: Dict[str, List[VersePair]] = {name: [] for name in kjv_corpus.SPLITS}
    for pair in pairs:
        splits[kjv_corpus.split_of(long_names[pair.book])].append(pair)
    return splits


# The Pauline letters, whose last verse the Reina-Valera module ends with the letter's
# colophon as verse text ("Amén. Escrita de Roma con Epafrodito."); the KJV module marks the
# same colophons as headings (dropped by osis_to_text) and the WEB has none.
COLOPHON_BOOKS = ("Rom", "1Cor", "2Cor", "Gal", "Eph", "Phil", "Col", "1Thess", "2Thess",
                  "1Tim", "2Tim", "Titus", "Phlm", "Heb")
_COLOPHON_AFTER = " Amén. "
# A pair whose Spanish/English length ratio is this far from the median ratio is not a
# translation of one verse by the other (English 1 John 5:7 lacks the Comma Johanneum).
MAX_LENGTH_RATIO = 2.5
# Shift detection: a run of SHIFT_WINDOW verses whose mean |log length ratio| (from the median)
# is above SHIFT_MIN_COST, and at most half that when each Spanish verse is set against the
# English verse before or after it, is a stretch numbered one apart.
SHIFT_WINDOW = 3
SHIFT_MIN_COST = 0.3


def strip_colophon(book: str, is_last_verse: bool, spanish: str) -> str:
    if book in COLOPHON_BOOKS and is_last_verse and _COLOPHON_AFTER in spanish:
        return spanish.split(_COLOPHON_AFTER, 1)[0] + _COLOPHON_AFTER.rstrip()
    return spanish


def _length_log_ratio(spanish: str, english: str) -> float:
    return math.log(len(spanish) / len(english))


def _chapter_is_shifted(chapter: List[VersePair], median: float) -> bool:
    def cost(i: int, j: int) -> float:
        return abs(_length_log_ratio(chapter[i].spanish, chapter[j].english) - median)

    n = len(chapter)
    for start in range(n - SHIFT_WINDOW + 1):
        window = range(start, start + SHIFT_WINDOW)
        as_is = sum(cost(i, i) for i in window) / SHIFT_WINDOW
        if as_is <= SHIFT_MIN_COST:
            continue
        shifted = [sum(cost(i, i + step) for i in window) / SHIFT_WINDOW
                   for step in (-1, 1) if 0 <= start + step and start + SHIFT_WINDOW + step <= n]
        if shifted and min(shifted) <= as_is / 2:
            return True
    return False


def drop_misaligned(pairs: List[VersePair]) -> Tuple[List[VersePair], Dict[str, List[str]]]:
    """Drops whole chapters whose verse lengths say they are numbered one apart, then single
    pairs whose length ratio is beyond MAX_LENGTH_RATIO of the median. Returns (kept, {reason:
    dropped references})."""
    ratios = sorted(_length_log_ratio(p.spanish, p.english) for p in pairs)
    median = ratios[len(ratios) // 2]
    chapters: Dict[Tuple[str, int], List[VersePair]] = collections.defaultdict(list)
    for p in pairs:
        chapters[(p.book, p.chapter)].append(p)
    shifted = {key for key, verses in chapters.items() if _chapter_is_shifted(verses, median)}
    dropped: Dict[str, List[str]] = collections.defaultdict(list)
    kept = []
    for p in pairs:
        name = f"{p.book}.{p.chapter}.{p.verse}"
        if (p.book, p.chapter) in shifted:
            dropped["in a chapter whose verse lengths fit better shifted by one"].append(name)
        elif abs(_length_log_ratio(p.spanish, p.english) - median) > math.log(MAX_LENGTH_RATIO):
            dropped[f"length ratio over {MAX_LENGTH_RATIO}x from the median"].append(name)
        else:
            kept.append(p)
    return kept, dict(dropped)


def align(spanish: Dict, english: Dict, kjv: Dict) -> Tuple[List[VersePair], List[str],
                                                            Dict[str, List[str]]]:
    """Pairs the verses present and non-empty on both sides. Returns (pairs, their KJV texts,
    {reason: [dropped references]}).

    The Spanish module is in the KJV versification but numbers some chapter ends as Spanish
    Bibles do: its KJV verse is empty and the text is in the next chapter (Jonah 1:17 is its
    Jonah 2:1), so the following chapter is shifted by one against the English. Both the
    chapter with the gap and the next one are dropped rather than risk misaligned pairs."""
    dropped: Dict[str, List[str]] = collections.defaultdict(list)
    shifted = set()
    for (book, chapter, verse), es in spanish.items():
        if not es and english.get((book, chapter, verse)):
            shifted.update({(book, chapter), (book, chapter + 1)})
    last_verse = {}
    for book, chapter, verse in spanish:
        last_verse[book] = (book, chapter, verse)
    pairs, kjv_texts = [], []
    for reference, es in spanish.items():
        book, chapter, verse = reference
        en = english.get(reference)
        if es:
            es = strip_colophon(book, reference == last_verse[book], es)
        name = f"{book}.{chapter}.{verse}"
        if en is None:
            dropped["not in the English module's versification"].append(name)
        elif not es and not en:
            dropped["empty in both"].append(name)
        elif not es:
            dropped["Spanish empty (Spanish numbering moves the verse)"].append(name)
        elif not en:
            dropped["English empty (the WEB omits the verse)"].append(name)
        elif (book, chapter) in shifted:
            dropped["in a chapter next to a Spanish numbering gap"].append(name)
        else:
            pairs.append(VersePair(book, chapter, verse, es, en))
            kjv_texts.append(kjv.get(reference) or "")
    return pairs, kjv_texts, dict(dropped)


def versification_check(kjv_refs: List[sword_bible.Reference]) -> Dict[str, List[str]]:
    """The English module's own versification against KJV in the 66 books: verses only it
    has, with text (they would be lost), and verses with text only it lacks."""
    books = {book for book, _, _ in kjv_refs}
    own = [ref for ref, _ in sword_bible.references(
        sword_bible.module_conf(sword_bible.ENGLISH_MODULE)["Versification"]) if ref[0] in books]
    kjv_set, own_set = set(kjv_refs), set(own)
    extra = [r for r in own if r not in kjv_set]
    texts = sword_bible.read_module(sword_bible.ENGLISH_MODULE, extra)
    return {
        "english_versification": sword_bible.module_conf(
            sword_bible.ENGLISH_MODULE)["Versification"],
        "english_only_verses_with_text": [f"{b}.{c}.{v}" for (b, c, v), t in texts.items() if t],
        "english_only_verses_empty": [f"{b}.{c}.{v}" for (b, c, v), t in texts.items() if not t],
        "kjv_verses_missing_in_english": [f"{b}.{c}.{v}" for b, c, v in kjv_refs
                                          if (b, c, v) not in own_set],
    }


def encode_with_eos(model: Path, lines: List[str], scratch: Path) -> List[List[int]]:
    scratch.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    ids = prepare_corpus.encode_lines(model, scratch)
    scratch.unlink()
    if len(ids) != len(lines):
        raise SystemExit(f"bible_parallel_corpus: spm_encode gave {len(ids)} lines for "
                         f"{len(lines)} verses")
    return [row + [prepare_corpus.EOS_ID] for row in ids]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "build-training" / "translation")
    parser.add_argument("--vocab-size", type=int, default=DEFAULT_VOCAB_SIZE)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()

    verses = sword_bible.references("KJV")
    kjv_refs = [ref for ref, _ in verses]
    long_names = {ref[0]: name for ref, name in verses}
    texts = {module: sword_bible.read_module(module, kjv_refs)
             for module in (sword_bible.SPANISH_MODULE, sword_bible.ENGLISH_MODULE,
                            sword_bible.KJV_MODULE)}
    read_seconds = time.monotonic() - started
    pairs, kjv_texts, dropped = align(texts[sword_bible.SPANISH_MODULE],
                                      texts[sword_bible.ENGLISH_MODULE],
                                      texts[sword_bible.KJV_MODULE])
    kjv_of = {(p.book, p.chapter, p.verse): t for p, t in zip(pairs, kjv_texts)}
    pairs, misaligned = drop_misaligned(pairs)
    dropped.update(misaligned)
    splits = split_by_book(pairs, long_names)

    for split, rows in splits.items():
        write_tsv(args.out / f"{split}.tsv", rows)
        (args.out / f"{split}.kjv.txt").write_text(
            "".join(kjv_of[(p.book, p.chapter, p.verse)] + "\n" for p in rows), encoding="utf-8")
    train = splits["train"]
    (args.out / SPM_TRAIN_TEXT).write_text(
        "".join(p.spanish + "\n" for p in train) + "".join(p.english + "\n" for p in train),
        encoding="utf-8")
    prepare_corpus.train_tokenizer(args.out, args.vocab_size, SPM_TRAIN_TEXT)
    model = args.out / f"{prepare_corpus.TOKENIZER_PREFIX}.model"

    manifest = {
        "sources": {role: {"module": module, **{k: sword_bible.module_conf(module).get(k, "")
                                                 for k in ("Description", "Version",
                                                           "Versification", "DistributionLicense")}}
                    for role, module in (("spanish", sword_bible.SPANISH_MODULE),
                                         ("english", sword_bible.ENGLISH_MODULE),
                                         ("kjv_reference", sword_bible.KJV_MODULE))},
        "tokenizer": {"vocab_size": args.vocab_size, "model_type": "unigram", "joint": True,
                      "byte_fallback": True, "character_coverage": 1.0,
                      "unk_id": prepare_corpus.UNK_ID, "bos_id": prepare_corpus.BOS_ID,
                      "eos_id": prepare_corpus.EOS_ID, "pad_id": prepare_corpus.PAD_ID,
                      "trained_on": SPM_TRAIN_TEXT},
        "kjv_verses": len(kjv_refs),
        "aligned_verses": len(pairs),
        "dropped": {reason: {"count": len(refs), "verses": refs}
                    for reason, refs in sorted(dropped.items())},
        "versification_check": versification_check(kjv_refs),
        "splits": {},
    }
    for split, rows in splits.items():
        source = encode_with_eos(model, [p.spanish for p in rows], args.out / "encode.tmp")
        target = encode_with_eos(model, [p.english for p in rows], args.out / "encode.tmp")
        for suffix, ids in (("src", source), ("tgt", target)):
            (args.out / f"{split}.{suffix}.ids").write_text(
                "".join(" ".join(map(str, row)) + "\n" for row in ids))
        books = list(dict.fromkeys(long_names[p.book] for p in rows))
        manifest["splits"][split] = {
            "books": books if split != "train" else len(books),
            "verses": len(rows),
            "spanish_words": sum(len(p.spanish.split()) for p in rows),
            "english_words": sum(len(p.english.split()) for p in rows),
            "spanish_tokens": sum(len(r) for r in source),
            "english_tokens": sum(len(r) for r in target),
        }
        print(f"bible_parallel_corpus: {split}: {len(books)} books, {len(rows)} verses, "
              f"{manifest['splits'][split]['spanish_tokens']} Spanish / "
              f"{manifest['splits'][split]['english_tokens']} English tokens (with eos)")
    for reason, entry in manifest["dropped"].items():
        print(f"bible_parallel_corpus: dropped {entry['count']}: {reason}")
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1,
                                                       ensure_ascii=False) + "\n")
    print(f"bible_parallel_corpus: read the modules in {read_seconds:.1f} s, "
          f"all done in {time.monotonic() - started:.1f} s; wrote {args.out}")


if __name__ == "__main__":
    main()
