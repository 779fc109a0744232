#!/usr/bin/env python3
"""Test-set perplexity of a model directory in the PyTorch reference (slotserve_ref), with the
protocol of evaluation.py (windows of --window tokens, each from an empty state, BOS first).

--form recurrent (default) runs the reference's recurrent form, model.step(), token by token:
every window's state is streamed through its text exactly as the C++ engine does
(slotserve-perplexity); all windows go through together as one batch (short windows are padded
at the end, which cannot affect their real tokens). --form parallel runs the whole-sequence form
instead (faster; the two agree to rounding, tests/test_parallel_vs_recurrent.py).

Prints one JSON object like slotserve-perplexity's.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluation import load_ids, window_batches  # noqa: E402
from slotserve_ref.model_dir import load_model_dir  # noqa: E402

DTYPES = {"float32": torch.float32, "float64": torch.float64}


@torch.no_grad()
def score_batch(model, inputs, targets, mask, form: str) -> float:
    if form == "parallel":
        logits = model(inputs)
    else:
        logits, _ = model.forward_recurrent(inputs)
    nll = F.cross_entropy(logits.flatten(0, 1).double(), targets.flatten(), reduction="none")
    return float((nll * mask.flatten().double()).sum())


def evaluate(model, books, window: int, form: str, batch: int, max_tokens=None) -> dict:
    total_nll, total_tokens, total_windows = 0.0, 0, 0
    for inputs, targets, mask in window_batches(books, window, model.config.bos_id, batch,
                                                max_tokens):
        total_nll += score_batch(model, inputs, targets, mask, form)
        total_tokens += int(mask.sum())
        total_windows += inputs.shape[0]
    return {"tokens": total_tokens, "windows": total_windows, "window": window,
            "nll": total_nll, "perplexity": math.exp(total_nll / total_tokens)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True, help="model directory")
    parser.add_argument("--ids", type=Path, required=True, help="one book of token ids per line")
    parser.add_argument("--window", type=int, required=True)
    parser.add_argument("--max-tokens", type=int, default=None)
    parser.add_argument("--form", choices=("recurrent", "parallel"), default="recurrent")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    parser.add_argument("--batch", type=int, default=128, help="windows per batch")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    started = time.time()
    model = load_model_dir(args.model, DTYPES[args.dtype])
    result = evaluate(model, load_ids(args.ids), args.window, args.form, args.batch,
                      args.max_tokens)
    result = {"attention": model.config.attention.kind, **result, "form": args.form,
              "dtype": args.dtype, "seconds": round(time.time() - started, 2)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
