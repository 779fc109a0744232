"""Writes the random-weight model directories the benchmarks run on, one per attention kind,
all with the same sizes (weights do not change the speed, so random ones serve):

  abc, rfa, luna   the bounded-memory kinds
  softmax          the KV-cache baseline, max_context --short-context (batch sweeps: 256 slots)
  softmax-long     the same baseline with max_context --long-context (context sweep, prefill)

  PYTHONPATH=python /usr/bin/python3 bench/python/make_bench_models.py --out DIR \
      [--size bundled|tiny]

`bundled` is the size of the demo models (4 layers, d_model 256, 4 heads, d_ffn 1024, vocab
4000, ABC M=32, RFA D=32, Luna L=32); `tiny` is for the seconds-long smoke test. A directory
whose config.json already matches is left alone, so repeated runs reuse it.
"""

import argparse
import json
import sys
from pathlib import Path

from slotserve_ref import make_random_model

SIZES = {
    "bundled": {"vocab_size": 4000, "d_model": 256, "n_layers": 4, "n_heads": 4, "d_ffn": 1024},
    "tiny": {"vocab_size": 64, "d_model": 16, "n_layers": 1, "n_heads": 2, "d_ffn": 32},
}


def attention_configs(short_context, long_context):
    return {
        "abc": {"kind": "abc", "slots": 32},
        "rfa": {"kind": "rfa", "features": 32, "gate": True},
        "luna": {"kind": "luna", "length": 32},
        "softmax": {"kind": "softmax", "max_context": short_context},
        "softmax-long": {"kind": "softmax", "max_context": long_context},
    }


def matches(out_dir, overrides):
    """True when out_dir already holds a model with these sizes and this attention config."""
    try:
        config = json.loads((out_dir / "config.json").read_text())
    except (OSError, ValueError):
        return False
    if not (out_dir / "model.safetensors").is_file():
        return False
    if any(config.get(key) != value for key, value in overrides.items() if key != "attention"):
        return False
    return all(config["attention"].get(k) == v for k, v in overrides["attention"].items())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--size", choices=sorted(SIZES), default="bundled")
    parser.add_argument("--short-context", type=int, default=512)
    parser.add_argument("--long-context", type=int, default=16384 + 64,
                        help="16k plus room for the decode steps timed after it")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    for name, attention in attention_configs(args.short_context, args.long_context).items():
        overrides = dict(SIZES[args.size], attention=attention)
        out_dir = args.out / name
        if matches(out_dir, overrides):
            print(f"make_bench_models: {out_dir} is up to date", file=sys.stderr)
            continue
        status = make_random_model.main(["--config", json.dumps(overrides), "--seed",
                                         str(args.seed), "--out", str(out_dir)])
        if status != 0:
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
