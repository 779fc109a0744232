#!/usr/bin/env python3
"""16-bit weights kept 16-bit against the same weights widened to F32 (issue 16, item 1), and one
against two compute threads: the engine's batched decode step (slotserve-bench --suite=decode)
on each F16 model given and on an F32 copy of it written here, in interleaved rounds so that
both see the same machine; medians of the rounds' medians, and the F16/F32 ratio.

  /usr/bin/python3 bench/python/half_weights_bench.py --bench build/bench/slotserve-bench \\
      --models models/trained/kjv-abc-m32,models/trained/kjv-softmax-c512 \\
      --batches 1,8,32,64 --threads 1,2 --rounds 3 --out bench/results/half_weights.md
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
from slotserve_ref.safetensors_io import load_file_with_metadata, save_file  # noqa: E402


def f32_copy(model: Path, into: Path) -> Path:
    """The model directory with every tensor widened to float32 (exactly: F16 -> F32)."""
    out = into / model.name
    out.mkdir(parents=True)
    for name in ("config.json", "tokenizer.model"):
        if (model / name).exists():
            shutil.copy(model / name, out / name)
    tensors, metadata = load_file_with_metadata(model / "model.safetensors")
    save_file({k: v.to(torch.float32) for k, v in tensors.items()}, out / "model.safetensors",
              metadata=metadata)
    return out


def decode_rows(bench: str, model: Path, batches: str, threads: int):
    """{batch: tokens/s} from one decode-suite run."""
    run = subprocess.run([bench, "--suite=decode", f"--models={model}", f"--batches={batches}",
                          f"--threads={threads}"], check=True, capture_output=True, text=True)
    rows = {}
    for line in run.stdout.splitlines():
        fields = line.split()
        if len(fields) == 9 and fields[2].isdigit():
            rows[int(fields[2])] = float(fields[7])
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", required=True)
    parser.add_argument("--models", required=True)
    parser.add_argument("--batches", default="1,8,32,64")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    threads = [int(t) for t in args.threads.split(",")]
    lines = ["| model | threads | batch | F16 kept tok/s | F32 tok/s | F16 / F32 |",
             "|---|---:|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as tmp:
        for model in (Path(m) for m in args.models.split(",")):
            wide = f32_copy(model, Path(tmp))
            for thread_count in threads:
                samples = {"f16": {b: [] for b in batches}, "f32": {b: [] for b in batches}}
                for _ in range(args.rounds):
                    for label, directory in (("f16", model), ("f32", wide)):
                        for batch, rate in decode_rows(args.bench, directory, args.batches,
                                                       thread_count).items():
                            samples[label][batch].append(rate)
                for batch in batches:
                    half = statistics.median(samples["f16"][batch])
                    full = statistics.median(samples["f32"][batch])
                    lines.append(f"| {model.name} | {thread_count} | {batch} | {half:,.0f} | "
                                 f"{full:,.0f} | {half / full:.2f} |")
                    print(lines[-1], flush=True)
    table = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(table)
    else:
        print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
