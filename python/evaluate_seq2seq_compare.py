#!/usr/bin/env python3
"""Checks that the C++ engine (slotserve-perplexity --source-ids/--target-ids) and the float64
reference (evaluate_seq2seq_perplexity.py) give the same test perplexity for one encoder–decoder
model on the same sentence pairs: both must score the same tokens, and the relative difference
of the perplexities must be within --tolerance. With --quantize TOOL the model is first
quantised to int8 by TOOL (slotserve-quantize) into a temporary directory and that copy is
compared; with --int8-activations both compute it as the engine's --int8-activations does.
Registered as ctests (label python) on a bundled translation model.
Exit status 0 when they agree, 1 otherwise; prints both results.

  evaluate_seq2seq_compare.py --tool slotserve-perplexity --model DIR \\
      --source-ids SRC --target-ids TGT [--quantize slotserve-quantize] [--int8-activations]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluate_seq2seq_perplexity import split_nll  # noqa: E402
from train_seq2seq import load_pairs  # noqa: E402


def run(command) -> subprocess.CompletedProcess:
    done = subprocess.run([str(part) for part in command], capture_output=True, text=True)
    if done.returncode != 0:
        print(f"evaluate_seq2seq_compare: {' '.join(map(str, command))} failed: "
              f"{done.stderr.strip()}")
        sys.exit(1)
    return done


def compare(args, model: Path) -> int:
    command = [args.tool, "--model", model, "--source-ids", args.source_ids, "--target-ids",
               args.target_ids, "--backend", args.backend]
    if args.int8_activations:
        command += ["--int8-activations", "on"]
    cpp = json.loads(run(command).stdout)
    pairs = load_pairs(args.source_ids, args.target_ids)
    ref = split_nll(model, pairs, args.int8_activations)
    print(f"C++:       {json.dumps(cpp)}\nreference: {json.dumps(ref)}")
    if (cpp["tokens"], cpp["pairs"]) != (ref["tokens"], ref["pairs"]):
        print(f"evaluate_seq2seq_compare: C++ scored {cpp['tokens']} tokens of {cpp['pairs']} "
              f"pairs, the reference {ref['tokens']} of {ref['pairs']}")
        return 1
    diff = cpp["perplexity"] / ref["perplexity"] - 1.0
    if abs(diff) > args.tolerance:
        print(f"evaluate_seq2seq_compare: perplexities differ by {diff:+.2e}, allowed "
              f"±{args.tolerance:.0e}")
        return 1
    print(f"evaluate_seq2seq_compare: agree within {diff:+.2e}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", type=Path, required=True, help="slotserve-perplexity binary")
    parser.add_argument("--model", type=Path, required=True, help="a slotserve-seq2seq directory")
    parser.add_argument("--source-ids", type=Path, required=True)
    parser.add_argument("--target-ids", type=Path, required=True)
    parser.add_argument("--quantize", type=Path, default=None,
                        help="slotserve-quantize binary: compare the model's int8 copy")
    parser.add_argument("--int8-activations", action="store_true")
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--tolerance", type=float, default=1e-5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.quantize is None:
        return compare(args, args.model)
    with tempfile.TemporaryDirectory() as tmp:
        quantized = Path(tmp) / args.model.name
        run([args.quantize, args.model, quantized])
        return compare(args, quantized)


if __name__ == "__main__":
    sys.exit(main())
