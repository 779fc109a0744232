#!/usr/bin/env python3
"""Writes the golden fla checkpoints (issue 20): small random-weight `abc` and `gsa` models with
fla's exact config keys and tensor names, plus the float64 reference's logits at every position
of a fixed token sequence, in the golden format of tests/golden/README.md:

  tests/golden/fla/<variant>/config.json            fla's keys (model_type abc | gsa)
  tests/golden/fla/<variant>/model.safetensors      or model-0000i-of-0000n.safetensors + index
  tests/golden/fla/<variant>/golden.json            {"tokens": [...], "vocab_size": V}
  tests/golden/fla/<variant>/golden_logits.f32      little-endian float32 [len(tokens), V]

The logits come from the checkpoint as re-read from disk (F16/BF16 variants use the rounded
weights), token by token through the recurrent form; before anything is written they must agree
with the whole-sequence and the chunked prefill to 1e-9.

Usage (repository root):
  PYTHONPATH=python /usr/bin/python3 -m slotserve_ref.fla.make_golden_checkpoints
  PYTHONPATH=python /usr/bin/python3 -m slotserve_ref.fla.make_golden_checkpoints --only gsa
  PYTHONPATH=python /usr/bin/python3 -m slotserve_ref.fla.make_golden_checkpoints --check
      # recompute the committed checkpoints' logits and compare; writes nothing, exit 1 on a
      # mismatch
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Dict

import numpy as np
import torch

from ..golden_cli import run_golden_cli
from .checkpoint import layer_prefix, write_checkpoint
from .config import FlaConfig
from .model import FlaModel
from .random_weights import random_tensors

REPO = Path(__file__).resolve().parents[3]
DEFAULT_OUT = REPO / "tests" / "golden" / "fla"
SEQUENCE_LENGTH = 40
SEQUENCE_SEED = 2020
PREFILL_CHUNK = 7
FORMS_TOLERANCE = 1e-9   # float64: step, whole prefill and chunked prefill are the same math
CHECK_TOLERANCE = 1e-5   # --check: committed float32 logits against a recomputation
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}

SMALL = {"hidden_size": 64, "num_hidden_layers": 2, "num_heads": 2, "num_slots": 8,
         "vocab_size": 256, "conv_size": 4, "intermediate_size": 64, "norm_eps": 1e-6,
         "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "swish",
         "transformers_version": "4.48.0"}

# variant -> (config keys over SMALL, weight dtype, shards, seed, legacy layout)
VARIANTS = {
    # RoPE on q/k, a clamp that cuts some slot logits, untied lm_head, per-head gated norm.
    "abc_rope_clamp": ({"model_type": "abc", "architectures": ["ABCForCausalLM"],
                        "use_rope": True, "clamp_min": -1.5, "clamp_max": 1.5,
                        "expand_k": 0.5, "expand_v": 1}, "f32", 1, 101, False),
    # Short convolutions, no RoPE, tied embeddings, output norm without weight, MLP width from
    # hidden_ratio (rounded up to 256), BF16 weights.
    "abc_conv_tied_bf16": ({"model_type": "abc", "architectures": ["ABCForCausalLM"],
                            "use_rope": False, "use_short_conv": True,
                            "tie_word_embeddings": True, "elementwise_affine": False,
                            "intermediate_size": None, "hidden_ratio": 2}, "bf16", 1, 102, False),
    # GSA with fla's defaults: swish feature map, no conv, gate_logit_normalizer 8.
    "gsa": ({"model_type": "gsa", "architectures": ["GSAForCausalLM"],
             "gate_logit_normalizer": 8}, "f32", 1, 201, False),
    # Short convolutions, 4 query heads over 2 kv heads, narrower keys, F16, three shards.
    "gsa_conv_gqa_sharded": ({"model_type": "gsa", "architectures": ["GSAForCausalLM"],
                              "num_heads": 4, "num_kv_heads": 2, "expand_k": 0.5,
                              "use_short_conv": True, "gate_logit_normalizer": 16},
                             "f16", 3, 202, False),
    # The trainable T2R feature map, tied embeddings, output norm without weight.
    "gsa_t2r_tied": ({"model_type": "gsa", "architectures": ["GSAForCausalLM"],
                      "feature_map": "t2r", "tie_word_embeddings": True,
                      "elementwise_affine": False, "gate_logit_normalizer": 32},
                     "f32", 1, 203, False),
    # fla before February 2025: norm_first, norms inside attn/mlp, fused gate/up projection.
    "gsa_legacy_norm_first": ({"model_type": "gsa", "architectures": ["GSAForCausalLM"],
                               "norm_first": True, "feature_map": "relu"}, "f32", 1, 204, True),
}


def variant_config(name: str) -> Dict:
    """config.json as fla writes it (null where a field is None)."""
    return dict(SMALL, **VARIANTS[name][0])


def to_legacy_layout(cfg: FlaConfig, tensors: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    """Today's names -> the pre-2025-02 norm_first layout (the inverse of
    checkpoint.normalize_legacy_names): attn.norm, mlp.norm, gate_proj = [gate; up]."""
    out = dict(tensors)
    for i in range(cfg.num_hidden_layers):
        p = layer_prefix(i)
        out[f"{p}.attn.norm.weight"] = out.pop(f"{p}.attn_norm.weight")
        out[f"{p}.mlp.norm.weight"] = out.pop(f"{p}.mlp_norm.weight")
        gate, up = out.pop(f"{p}.mlp.gate_proj.weight"), out.pop(f"{p}.mlp.up_proj.weight")
        out[f"{p}.mlp.gate_proj.weight"] = torch.cat([gate, up], dim=0)
    return out


def golden_tokens(cfg: FlaConfig) -> torch.Tensor:
    gen = torch.Generator().manual_seed(SEQUENCE_SEED)
    tokens = torch.randint(0, cfg.vocab_size, (SEQUENCE_LENGTH,), generator=gen)
    tokens[0] = cfg.bos_token_id
    return tokens


def reference_logits(model: FlaModel, tokens: torch.Tensor, name: str) -> torch.Tensor:
    """Token-by-token logits [T, V], refused unless the prefill forms agree."""
    recurrent, _ = model.forward_recurrent(tokens)
    for chunk in (None, PREFILL_CHUNK):
        prefilled, _ = model.prefill(tokens, chunk=chunk)
        diff = (prefilled - recurrent).abs().max().item()
        if diff > FORMS_TOLERANCE:
            raise SystemExit(f"{name}: prefill (chunk {chunk}) differs from the step form by "
                             f"{diff:.3g}, tolerance {FORMS_TOLERANCE}")
    return recurrent


def check_non_degenerate(model: FlaModel, tokens: torch.Tensor, logits: torch.Tensor,
                         name: str) -> None:
    """Golden data must catch mistakes: logits spread within each row, and the last row
    depends on token 1 (the mixer carries context)."""
    spread = (logits.max(-1).values - logits.min(-1).values).min().item()
    if spread <= 1.0:
        raise SystemExit(f"{name}: logits vary by only {spread:.3g} within a row, expected > 1")
    altered = tokens.clone()
    altered[1] = (altered[1] + 1) % model.cfg.vocab_size
    moved = (model.prefill(altered)[0][-1] - logits[-1]).abs().max().item()
    if moved < 1e-2:
        raise SystemExit(f"{name}: changing token 1 moves the last logits by only {moved:.3g}")


def write_variant(out_root: Path, name: str) -> None:
    _, dtype, shards, seed, legacy = VARIANTS[name]
    config = variant_config(name)
    cfg = FlaConfig.from_dict(config, source=name)
    tensors = random_tensors(cfg, seed)
    if legacy:
        tensors = to_legacy_layout(cfg, tensors)
    out_dir = out_root / name
    if out_dir.exists():
        shutil.rmtree(out_dir)
    stored = {n: t.to(DTYPES[dtype]).contiguous() for n, t in tensors.items()}
    write_checkpoint(out_dir, config, stored, shards=shards)
    model = FlaModel.load(out_dir)  # the weights exactly as stored
    tokens = golden_tokens(cfg)
    logits = reference_logits(model, tokens, name)
    check_non_degenerate(model, tokens, logits, name)
    (out_dir / "golden.json").write_text(
        json.dumps({"tokens": tokens.tolist(), "vocab_size": cfg.vocab_size}) + "\n")
    logits.numpy().astype("<f4").tofile(out_dir / "golden_logits.f32")
    size = sum(f.stat().st_size for f in out_dir.iterdir())
    print(f"{name:24s} {dtype:4s} shards {shards}  {size / 1024:6.1f} KiB  logits spread "
          f"{(logits.max(-1).values - logits.min(-1).values).min():.2f}")


def check_variant(out_root: Path, name: str) -> bool:
    out_dir = out_root / name
    model = FlaModel.load(out_dir)
    golden = json.loads((out_dir / "golden.json").read_text())
    tokens = torch.tensor(golden["tokens"])
    committed = np.fromfile(out_dir / "golden_logits.f32", dtype="<f4")
    committed = committed.reshape(len(tokens), golden["vocab_size"])
    diff = float(np.abs(reference_logits(model, tokens, name).numpy() - committed).max())
    ok = diff <= CHECK_TOLERANCE
    print(f"{name:24s} max |reference - committed| = {diff:.3g} {'ok' if ok else 'MISMATCH'}")
    return ok


def main(argv=None) -> int:
    return run_golden_cli(__doc__.split("\n\n")[0], VARIANTS, DEFAULT_OUT, write_variant,
                          check_variant, argv)


if __name__ == "__main__":
    sys.exit(main())
