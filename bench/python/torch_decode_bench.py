"""The PyTorch anchor of the decode benchmark: the reference model's recurrent `step` (the
slotserve_ref package, fp32, torch.inference_mode) on the same model directories, batch sizes,
context and thread count as slotserve-bench's decode suite, timed the same way (median of
repeats of several steps, each repeat starting from the same context).

  PYTHONPATH=python /usr/bin/python3 bench/python/torch_decode_bench.py \
      --models DIR,DIR --batches 1,64 --context 128 --threads 1 --out decode_torch.csv
"""

import argparse
import csv
import statistics
import sys
import time
from pathlib import Path

import torch

from slotserve_ref.model_dir import load_model_dir


def positive_ints(text):
    values = [int(v) for v in text.split(",") if v]
    if not values or any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def percentile(values, q):
    ordered = sorted(values)
    rank = q / 100 * (len(ordered) - 1)
    below = int(rank)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (rank - below) * (ordered[above] - ordered[below])


def synthetic_tokens(count, vocab, seed):
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(3, vocab, (count,), generator=generator)


def context_state(model, context):
    """The state after `context` tokens of one request (fed through the recurrent form)."""
    tokens = synthetic_tokens(context, model.config.vocab_size, seed=1)
    _, state = model.forward_recurrent(tokens.unsqueeze(0))
    return state


def batch_state(state, batch):
    return [{name: t.expand(batch, *t.shape[1:]).contiguous() for name, t in layer.items()}
            for layer in state]


def time_decode(model, base_state, batch, context, steps, warmup, repeats):
    tokens = synthetic_tokens(batch, model.config.vocab_size, seed=7)
    seconds_per_step = []
    for run in range(warmup + repeats):
        state = batch_state(base_state, batch)
        start = time.perf_counter()
        for step in range(steps):
            positions = torch.full((batch,), context + step, dtype=torch.long)
            _, state = model.step(tokens, state, positions)
        elapsed = time.perf_counter() - start
        if run >= warmup:
            seconds_per_step.append(elapsed / steps)
    return seconds_per_step


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", required=True, help="model directories, comma-separated")
    parser.add_argument("--batches", type=positive_ints, default=[1, 64])
    parser.add_argument("--context", type=int, default=128)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps-per-repeat", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path, help="CSV file to write")
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    rows = []
    with torch.inference_mode():
        for model_dir in (Path(d) for d in args.models.split(",") if d):
            model = load_model_dir(model_dir, dtype=torch.float32)
            kind = model.config.attention.kind
            print(f"torch: {model_dir.name} ({kind}), {args.threads} thread(s)", file=sys.stderr)
            base_state = context_state(model, args.context)
            for batch in args.batches:
                seconds = time_decode(model, base_state, batch, args.context,
                                      args.steps_per_repeat, args.warmup, args.repeats)
                median = statistics.median(seconds)
                rows.append({
                    "model": model_dir.name, "kind": kind, "batch": batch,
                    "context": args.context, "threads": args.threads,
                    "step_ms": f"{median * 1e3:.4f}",
                    "step_ms_p10": f"{percentile(seconds, 10) * 1e3:.4f}",
                    "step_ms_p90": f"{percentile(seconds, 90) * 1e3:.4f}",
                    "tokens_per_s": f"{batch / median:.1f}",
                })
    columns = ["model", "kind", "batch", "context", "threads", "step_ms", "step_ms_p10",
               "step_ms_p90", "tokens_per_s"]
    print(f"== PyTorch reference recurrent decode (torch {torch.__version__}, context "
          f"{args.context})")
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) if rows else len(c)
              for c in columns}
    print("  ".join(c.rjust(widths[c]) for c in columns))
    for row in rows:
        print("  ".join(str(row[c]).rjust(widths[c]) for c in columns))
    if args.out:
        with open(args.out, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
