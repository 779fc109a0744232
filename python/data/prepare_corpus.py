#!/usr/bin/env python3
"""Builds the training corpus: KJV text split by book, a SentencePiece tokenizer trained on the
training split with Debian's `spm_train`, and every split encoded to token ids.

Writes into --out (default build-training/data):
  {train,valid,test}.txt   one verse per line (the tokenizer's training input is train.txt)
  tokenizer.model / .vocab the SentencePiece model (unk 0, bos 1, eos 2, no pad, byte fallback);
                           spm_train runs inside --out with relative names, so the model
                           records its input as `train.txt` and its prefix as `tokenizer`, not
                           a path of this machine (the same corpus gives the same bytes in any
                           checkout)
  {train,valid,test}.ids   one book per line: the book's token ids, space-separated, without
                           BOS; the verses' ids concatenated in order (each verse starts with a
                           word-boundary piece, so the stream reads as running text)
  manifest.json            books per split, verse and token counts, tokenizer settings

Everything is deterministic: the same packages give byte-identical outputs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kjv_corpus  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
# Ids must match config.json's bos_id / eos_id (docs/MODEL_FORMAT.md).
UNK_ID, BOS_ID, EOS_ID, PAD_ID = 0, 1, 2, -1


TRAIN_TEXT = "train.txt"
TOKENIZER_PREFIX = "tokenizer"


def train_tokenizer(directory: Path, vocab_size: int, train_text: str = TRAIN_TEXT) -> None:
    """Trains directory/tokenizer.{model,vocab} on directory/train_text. spm_train stores its
    --input and --model_prefix in the model (trainer_spec), so it runs inside `directory` with
    the bare names: an absolute path would tie the file to this machine's checkout."""
    command = [
        "spm_train", f"--input={train_text}", f"--model_prefix={TOKENIZER_PREFIX}",
        f"--vocab_size={vocab_size}", "--model_type=unigram", "--character_coverage=1.0",
        "--byte_fallback=true", f"--unk_id={UNK_ID}", f"--bos_id={BOS_ID}",
        f"--eos_id={EOS_ID}", f"--pad_id={PAD_ID}", "--num_threads=1",
        "--input_sentence_size=0", "--shuffle_input_sentence=false", "--minloglevel=1",
    ]
    subprocess.run(command, check=True, cwd=directory)


def encode_lines(model: Path, text_file: Path) -> list[list[int]]:
    result = subprocess.run(["spm_encode", f"--model={model}", "--output_format=id"],
                            stdin=text_file.open("rb"), check=True, capture_output=True)
    lines = result.stdout.decode().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [[int(t) for t in line.split()] for line in lines]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "build-training" / "data")
    parser.add_argument("--vocab-size", type=int, default=4000)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    books = kjv_corpus.read_books()
    books_by_split = {split: [] for split in kjv_corpus.SPLITS}
    for name in books:
        books_by_split[kjv_corpus.split_of(name)].append(name)
    for split, names in books_by_split.items():
        with (args.out / f"{split}.txt").open("w") as f:
            for name in names:
                for verse in books[name]:
                    f.write(verse + "\n")

    train_tokenizer(args.out, args.vocab_size)
    tokenizer_model = args.out / f"{TOKENIZER_PREFIX}.model"

    manifest = {
        "source": "Debian bible-kjv-text (/usr/lib/bible.data) via `bible` (bible-kjv)",
        "tokenizer": {"vocab_size": args.vocab_size, "model_type": "unigram",
                      "byte_fallback": True, "unk_id": UNK_ID, "bos_id": BOS_ID,
                      "eos_id": EOS_ID, "pad_id": PAD_ID, "trained_on": TRAIN_TEXT},
        "splits": {},
    }
    for split, names in books_by_split.items():
        verse_ids = encode_lines(tokenizer_model, args.out / f"{split}.txt")
        expected = sum(len(books[name]) for name in names)
        if len(verse_ids) != expected:
            raise SystemExit(f"prepare_corpus: spm_encode gave {len(verse_ids)} lines for "
                             f"{split}.txt, expected one per verse ({expected})")
        entries, cursor = [], 0
        with (args.out / f"{split}.ids").open("w") as f:
            for name in names:
                n = len(books[name])
                ids = [t for verse in verse_ids[cursor:cursor + n] for t in verse]
                cursor += n
                f.write(" ".join(map(str, ids)) + "\n")
                entries.append({"book": name, "verses": n, "tokens": len(ids),
                                "words": sum(len(v.split()) for v in books[name])})
        manifest["splits"][split] = {
            "books": entries,
            "tokens": sum(e["tokens"] for e in entries),
            "words": sum(e["words"] for e in entries),
        }
        print(f"prepare_corpus: {split}: {len(names)} books, "
              f"{manifest['splits'][split]['words']} words, "
              f"{manifest['splits'][split]['tokens']} tokens")
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


if __name__ == "__main__":
    main()
