#!/usr/bin/env python3
"""Checks that the C++ engine (slotserve-perplexity) and the PyTorch reference
(evaluate_pytorch.py, recurrent form) give the same perplexity for one model on the same token
ids and windows: the relative difference must be within --tolerance and both must score the
same tokens. Fast on a small slice; registered as a ctest (label python) on the default model.
Exit status 0 when they agree, 1 otherwise; prints both results.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evaluate_pytorch  # noqa: E402
from evaluation import load_ids  # noqa: E402
from slotserve_ref.model_dir import load_model_dir  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", type=Path, required=True, help="slotserve-perplexity binary")
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--ids", type=Path, required=True)
    parser.add_argument("--window", type=int, default=256)
    parser.add_argument("--max-tokens", type=int, default=None)
    parser.add_argument("--prefill-chunk", type=int, default=64)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--tolerance", type=float, default=0.005)
    args = parser.parse_args()
    torch.set_num_threads(1)

    command = [str(args.tool), "--model", str(args.model), "--ids", str(args.ids),
               "--window", str(args.window), "--prefill-chunk", str(args.prefill_chunk),
               "--backend", args.backend]
    if args.max_tokens:
        command += ["--max-tokens", str(args.max_tokens)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"evaluate_compare: {' '.join(command)} failed: {done.stderr.strip()}")
        return 1
    cpp = json.loads(done.stdout)
    ref = evaluate_pytorch.evaluate(load_model_dir(args.model, torch.float32),
                                    load_ids(args.ids), args.window, "recurrent", batch=128,
                                    max_tokens=args.max_tokens)
    print(f"C++:     {json.dumps(cpp)}\nPyTorch: {json.dumps(ref)}")
    if cpp["tokens"] != ref["tokens"]:
        print(f"evaluate_compare: C++ scored {cpp['tokens']} tokens, PyTorch {ref['tokens']}")
        return 1
    diff = cpp["perplexity"] / ref["perplexity"] - 1.0
    if abs(diff) > args.tolerance:
        print(f"evaluate_compare: perplexities differ by {100 * diff:+.4f}%, allowed "
              f"±{100 * args.tolerance:.2f}%")
        return 1
    print(f"evaluate_compare: agree within {100 * diff:+.4f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
