#!/usr/bin/env python3
"""Writes a random-weight fla checkpoint of a public model's shape, in fla's layout (config.json
with fla's keys, BF16 weights under fla's names, shards + model.safetensors.index.json): what
issue 20's scale benchmark loads and serves on this machine in place of a downloaded checkpoint
(no network here). The weights are random (random_weights.py's scaling), so the speed, memory
and state sizes are a real checkpoint's; the text it generates is not.

Usage (repository root):
  PYTHONPATH=python /usr/bin/python3 -m slotserve_ref.fla.make_scale_checkpoint OUT_DIR \\
      [--shape gsa-1.3b|abc-1.3b] [--shards 3] [--dtype bf16|f16|f32]

gsa-1.3b is fla's GSA-1.3B (fla-hub/gsa-1.3B-100B's config): 24 layers, hidden 2048, 4 heads,
64 slots, vocab 32000, swish feature map, normalizer 8, intermediate 5632 (GatedMLP's rule for
hidden_ratio 4), tied embeddings off. abc-1.3b is the ABC model of the same width and depth.
gsa-tiny-32k keeps GSA-1.3B's 32,000-token vocabulary (the Llama-2 tokenizer's) at a width of 64
and 2 layers, tied embeddings: the Hugging Face directory tests serve it in seconds.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import torch

from .checkpoint import expected_tensors, write_checkpoint
from .config import FlaConfig
from .random_weights import WIDE_PROJECTIONS

SHAPES = {
    "gsa-1.3b": {"model_type": "gsa", "hidden_size": 2048, "num_hidden_layers": 24,
                 "num_heads": 4, "num_slots": 64, "vocab_size": 32000, "expand_k": 1,
                 "expand_v": 1, "feature_map": "swish", "gate_logit_normalizer": 8,
                 "hidden_ratio": 4, "intermediate_size": None, "use_short_conv": False,
                 "tie_word_embeddings": False, "norm_eps": 1e-6,
                 "architectures": ["GSAForCausalLM"], "torch_dtype": "bfloat16"},
    "gsa-tiny-32k": {"model_type": "gsa", "hidden_size": 64, "num_hidden_layers": 2,
                     "num_heads": 2, "num_slots": 8, "vocab_size": 32000, "expand_k": 1,
                     "expand_v": 1, "feature_map": "swish", "gate_logit_normalizer": 8,
                     "hidden_ratio": 4, "intermediate_size": None, "use_short_conv": False,
                     "tie_word_embeddings": True, "norm_eps": 1e-6,
                     "architectures": ["GSAForCausalLM"], "torch_dtype": "bfloat16"},
    "abc-1.3b": {"model_type": "abc", "hidden_size": 2048, "num_hidden_layers": 24,
                 "num_heads": 4, "num_slots": 64, "vocab_size": 32000, "hidden_ratio": 4,
                 "intermediate_size": None, "use_short_conv": False, "use_rope": True,
                 "tie_word_embeddings": False, "norm_eps": 1e-6,
                 "architectures": ["ABCForCausalLM"], "torch_dtype": "bfloat16"},
}
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}


def random_tensor(name: str, shape, gen: torch.Generator, dtype: torch.dtype) -> torch.Tensor:
    """random_weights.random_tensors' scaling, generated in float32 one tensor at a time (a
    1.3B model in float64 would not fit comfortably)."""
    noise = torch.randn(shape, generator=gen, dtype=torch.float32)
    module = name.rsplit(".", 2)[-2]
    if name == "model.embeddings.weight":
        return noise.to(dtype)
    if "norm" in module:
        return (1.0 + 0.1 * noise).to(dtype)
    if "conv1d" in module:
        return (noise / math.sqrt(shape[-1])).to(dtype)
    return (noise * WIDE_PROJECTIONS.get(module, 1.0) / math.sqrt(shape[-1])).to(dtype)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="gsa-1.3b")
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)
    config = dict(SHAPES[args.shape])
    config["torch_dtype"] = {"bf16": "bfloat16", "f16": "float16", "f32": "float32"}[args.dtype]
    cfg = FlaConfig.from_dict(config)
    gen = torch.Generator().manual_seed(args.seed)
    tensors = {}
    for name, shape in sorted(expected_tensors(cfg).items()):
        tensors[name] = random_tensor(name, shape, gen, DTYPES[args.dtype])
    params = sum(t.numel() for t in tensors.values())
    write_checkpoint(args.out_dir, config, tensors, shards=args.shards)
    print(f"{args.out_dir}: {args.shape} {args.dtype}, {params / 1e9:.3f}B parameters, "
          f"{args.shards} shard(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
