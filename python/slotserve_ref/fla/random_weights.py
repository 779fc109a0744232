"""Deterministic random weights for an fla config (tests and golden checkpoints).

fla initialises with std 0.02 and unit norms, which makes a small random model's logits nearly
flat; here every Linear weight has std gain/sqrt(fan_in), norms are 1 ± 0.1 and the slot and
forget-gate projections are wider, so that slot weights, gates and context all clearly matter.
"""

from __future__ import annotations

import math
from typing import Dict

import torch

from .checkpoint import expected_tensors
from .config import FlaConfig

# Leaf names whose weights feed softmax/sigmoid logits: wider, so weights are far from uniform.
WIDE_PROJECTIONS = {"s_proj": 2.0, "f_proj": 2.0}


def random_tensors(cfg: FlaConfig, seed: int) -> Dict[str, torch.Tensor]:
    """Every tensor of expected_tensors(cfg) as float64 (lm_head left out when tied)."""
    gen = torch.Generator().manual_seed(seed)
    out = {}
    for name, shape in sorted(expected_tensors(cfg).items()):
        if name == "lm_head.weight" and cfg.tie_word_embeddings:
            continue
        noise = torch.randn(shape, generator=gen, dtype=torch.float64)
        module = name.rsplit(".", 2)[-2]
        if name == "model.embeddings.weight":
            out[name] = noise
        elif "norm" in module:
            out[name] = 1.0 + 0.1 * noise
        elif "conv1d" in module:
            out[name] = noise / math.sqrt(shape[-1])
        else:  # Linear [out, in] (o_proj, mlp, lm_head, t2r included)
            out[name] = noise * WIDE_PROJECTIONS.get(module, 1.0) / math.sqrt(shape[-1])
    return out
