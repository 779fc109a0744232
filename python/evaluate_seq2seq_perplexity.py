#!/usr/bin/env python3
"""Test perplexity of encoder–decoder model directories: every target of a split scored
teacher-forced by the reference (slotserve_ref.seq2seq_model, its parallel form, float64).

Each pair is scored as train_seq2seq.py trains it: the source as given, the decoder reading
[decoder_start_id, y_0 .. y_n-1] and predicting [y_0 .. y_n-1, eos_id], so every target token
and the end of every target is predicted once. Perplexity is exp(sum of -log p / tokens). The
model directory is read as stored (F16 widened exactly, int8 matrices as q * scale:
slotserve_ref.seq2seq_model_dir), so an F16 directory and its int8 copy compare the weights
alone; the C++ engine computes the same logits from the same directory (the golden seq2seq
tests, int8 variants included).

  PYTHONPATH=python /usr/bin/python3 python/evaluate_seq2seq_perplexity.py \
      --data build-training/translation [--split test] [--int8-activations] MODEL_DIR...

--int8-activations scores an int8 directory as the engine's --int8-activations computes it
(slotserve_ref/int8_activations.py; the golden seq2seq *_int8 variants check the engine against
it for every cross kind).

One JSON line per model: {"model", "pairs", "tokens", "nll", "perplexity"}.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Sequence

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from slotserve_ref.int8_activations import use_int8_activations_  # noqa: E402
from slotserve_ref.seq2seq_model_dir import load_seq2seq_model_dir  # noqa: E402
from train_seq2seq import IGNORE, Pair, load_pairs, make_batch  # noqa: E402

BATCH = 32


@torch.no_grad()
def split_nll(model_dir: Path, pairs: Sequence[Pair],
              int8_activations: bool = False) -> Dict[str, float]:
    """The summed -log p of every target token (and its eos) of `pairs` under the model."""
    model = load_seq2seq_model_dir(model_dir, torch.float64)
    if int8_activations:
        model = use_int8_activations_(model)
    by_length: Dict[int, List[Pair]] = defaultdict(list)  # the reference takes one source length
    for pair in pairs:
        by_length[len(pair[0])].append(pair)
    nll, tokens = 0.0, 0
    for length in sorted(by_length):
        group = by_length[length]
        for start in range(0, len(group), BATCH):
            source, inputs, labels = make_batch(group[start:start + BATCH], model.config)
            logits = model(source, inputs)
            nll += F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE,
                                   reduction="sum").item()
            tokens += int((labels != IGNORE).sum())
    return {"model": model_dir.name, "pairs": len(pairs), "tokens": tokens, "nll": nll,
            "perplexity": math.exp(nll / tokens)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", type=Path, nargs="+", help="seq2seq model directories")
    parser.add_argument("--data", type=Path, required=True,
                        help="the corpus directory (SPLIT.src.ids, SPLIT.tgt.ids)")
    parser.add_argument("--split", default="test")
    parser.add_argument("--int8-activations", action="store_true",
                        help="round every matrix product's input to int8 as the engine does")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    pairs = load_pairs(args.data / f"{args.split}.src.ids", args.data / f"{args.split}.tgt.ids")
    for model_dir in args.models:
        print(json.dumps(split_nll(model_dir, pairs, args.int8_activations)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
