#!/usr/bin/env python3
"""Generates the golden data the C++ engine is checked against (docs/ARCHITECTURE.md "Tests").

For every attention kind and variant it builds a small random-weight model with the PyTorch
reference (python/slotserve_ref), writes it as a model directory and records the
reference's logits for a fixed token sequence:

  tests/golden/models/<variant>/config.json
  tests/golden/models/<variant>/model.safetensors
  tests/golden/models/<variant>/golden.json        {"tokens": [...], "vocab_size": V}
  tests/golden/models/<variant>/golden_logits.f32  little-endian float32, len(tokens) rows x V;
                                                   row t = logits after feeding tokens[0..t]
                                                   (the format of slotserve-generate --dump-logits)

int8 variants also get golden_logits_int8_activations.f32: the same tokens with the engine's
int8 activations (--int8-activations; slotserve_ref/int8_activations.py), every matrix product's
input rounded to int8 per block of 32. The f32 softmax variant also gets
golden_logits_f16_kv_cache.f32: the same tokens with the engine's f16 KV cache (--kv-cache-dtype
f16; slotserve_ref/f16_kv_cache.py), every cached key and value rounded to a half.

The logits come from the model as re-loaded from the written directory (so F16/BF16 variants
use the rounded weights and int8 variants the dequantised q * scale), computed in float64 with the recurrent token-by-token form; the
parallel form must agree before anything is written.

Usage (from the repository root; Debian's python has torch):
  PYTHONPATH=python /usr/bin/python3 tests/golden/make_golden.py            # regenerate all
  PYTHONPATH=python /usr/bin/python3 tests/golden/make_golden.py --only abc  # one variant
  PYTHONPATH=python /usr/bin/python3 tests/golden/make_golden.py --check
      # recompute the logits of the committed model directories with the current reference and
      # compare them with the committed golden_logits.f32 (exit 1 on a mismatch); writes nothing.
"""

import json
import sys
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

from slotserve_ref.config import ModelConfig, merge_config_dict  # noqa: E402
from slotserve_ref.golden_cli import run_golden_cli  # noqa: E402
from slotserve_ref.f16_kv_cache import use_f16_kv_cache_  # noqa: E402
from slotserve_ref.init import randomize_  # noqa: E402
from slotserve_ref.int8_activations import use_int8_activations_  # noqa: E402
from slotserve_ref.model import LanguageModel  # noqa: E402
from slotserve_ref.model_dir import load_model_dir, save_model_dir  # noqa: E402

SEQUENCE_LENGTH = 40
SEQUENCE_SEED = 1234
PARALLEL_TOLERANCE = 1e-9   # float64: parallel and recurrent forms are the same math
CHECK_TOLERANCE = 1e-5      # --check: committed float32 logits vs recomputation

BASE = {
    "vocab_size": 61, "d_model": 32, "n_heads": 4, "n_layers": 2, "d_ffn": 64,
    "activation": "gelu", "norm_eps": 1e-5, "position": "sinusoidal", "position_offset": 0,
    "tie_embeddings": True, "embed_scale": 5.5, "bos_id": 1, "eos_id": 2,
}
RFA = {"kind": "rfa", "features": 8, "feature_scale": 0.5, "eps": 0.25, "norm_eps": 1e-3}

# variant -> (config overrides, weight dtype, init seed)
VARIANTS = {
    "abc": ({"position_offset": 2, "attention": {"kind": "abc", "slots": 8}}, "f32", 11),
    "abc_f16": ({"position_offset": 2, "attention": {"kind": "abc", "slots": 8}}, "f16", 12),
    "abc_bf16": ({"position_offset": 2, "attention": {"kind": "abc", "slots": 8}}, "bf16", 13),
    # int8 weight-only (slotserve_ref/int8_weights.py): I8 matrices + per-row F32 scales.
    "abc_int8": ({"position_offset": 2, "attention": {"kind": "abc", "slots": 8}}, "int8", 14),
    "rfa_concat": ({"activation": "relu", "tie_embeddings": False,
                    "attention": dict(RFA, gate=False, layout="concat")}, "f32", 21),
    "rfa_gate_interleave": ({"attention": dict(RFA, gate=True, layout="interleave")}, "f32", 22),
    "luna_softplus": ({"attention": {"kind": "luna", "length": 6, "activation": "softplus",
                                     "tie_kv": False}}, "f32", 31),
    "luna_elu1_tiekv": ({"position": "none",
                         "attention": {"kind": "luna", "length": 6, "activation": "elu1",
                                       "tie_kv": True}}, "f32", 32),
    "softmax": ({"attention": {"kind": "softmax", "max_context": 64}}, "f32", 41),
    "softmax_int8": ({"attention": {"kind": "softmax", "max_context": 64}}, "int8", 42),
    # abc's other memory controls (docs/ABC_CONTROLS.md). position_offset 2 on the positional
    # ones: their positions count the request's tokens from 0 and must not include it.
    "abc_window": ({"position_offset": 2,
                    "attention": {"kind": "abc", "slots": 8, "control": "window"}}, "f32", 51),
    "abc_linformer": ({"position_offset": 2,
                       "attention": {"kind": "abc", "slots": 8, "control": "linformer",
                                     "max_positions": 64}}, "f32", 52),
    "abc_compressive": ({"position_offset": 2,
                         "attention": {"kind": "abc", "slots": 8, "control": "compressive",
                                       "stride": 5}}, "f32", 53),
    "abc_random": ({"position_offset": 2,
                    "attention": {"kind": "abc", "slots": 8, "control": "random", "seed": 7}},
                   "f32", 54),
    "abc_relu": ({"attention": {"kind": "abc", "slots": 8, "activation": "relu"}}, "f32", 55),
    "abc_sigmoid": ({"attention": {"kind": "abc", "slots": 8, "activation": "sigmoid"}},
                    "f32", 56),
}


def golden_tokens(cfg: ModelConfig):
    gen = torch.Generator().manual_seed(SEQUENCE_SEED)
    tokens = torch.randint(0, cfg.vocab_size, (SEQUENCE_LENGTH,), generator=gen)
    tokens[0] = cfg.bos_id
    return tokens


@torch.no_grad()
def reference_logits(model: LanguageModel, tokens: torch.Tensor, name: str) -> torch.Tensor:
    """float64 logits [T, V] from the recurrent form, cross-checked against the parallel form."""
    recurrent, _ = model.forward_recurrent(tokens)
    parallel = model(tokens)
    diff = (recurrent - parallel).abs().max().item()
    if diff > PARALLEL_TOLERANCE:
        raise SystemExit(f"{name}: parallel and recurrent forms differ by {diff:.3g} "
                         f"(tolerance {PARALLEL_TOLERANCE})")
    return recurrent


@torch.no_grad()
def check_non_degenerate(model: LanguageModel, tokens: torch.Tensor, logits: torch.Tensor,
                         name: str) -> None:
    """The data must be able to catch mistakes: logits spread over the vocabulary, and the last
    prediction depends on an early token (attention actually carries context). An abc window
    forgets token 1 by design; there the early token is the oldest one its last read holds."""
    spread = (logits.max(dim=-1).values - logits.min(dim=-1).values).min().item()
    if spread <= 1.0:
        raise SystemExit(f"{name}: logits vary by only {spread:.3g} within a row, expected > 1")
    att = model.config.attention
    early = len(tokens) - att.slots if att.kind == "abc" and att.control == "window" else 1
    altered = tokens.clone()
    altered[early] = (altered[early] + 1) % model.config.vocab_size
    moved = (model(altered)[-1] - logits[-1]).abs().max().item()
    if moved < 1e-2:
        raise SystemExit(f"{name}: changing token {early} moves the last logits by only "
                         f"{moved:.3g}; attention carries no context")


INT8_ACTIVATIONS_FILE = "golden_logits_int8_activations.f32"


@torch.no_grad()
def int8_activation_logits(out_dir: Path, tokens: torch.Tensor, name: str) -> torch.Tensor:
    """float64 logits of the int8 directory `out_dir` with int8-rounded activations."""
    model = use_int8_activations_(load_model_dir(out_dir, torch.float64))
    return reference_logits(model, tokens, name + " (int8 activations)")


F16_KV_CACHE_FILE = "golden_logits_f16_kv_cache.f32"
F16_KV_CACHE_VARIANTS = ("softmax",)


@torch.no_grad()
def f16_kv_cache_logits(out_dir: Path, tokens: torch.Tensor, name: str) -> torch.Tensor:
    """float64 logits of the softmax directory `out_dir` with its KV cache in halves."""
    model = use_f16_kv_cache_(load_model_dir(out_dir, torch.float64))
    return reference_logits(model, tokens, name + " (f16 KV cache)")


def write_variant(out_root: Path, name: str) -> None:
    overrides, dtype, seed = VARIANTS[name]
    cfg = ModelConfig.from_dict(merge_config_dict(dict(BASE, **overrides)), source=name)
    model = randomize_(LanguageModel(cfg).double(), seed=seed)
    out_dir = out_root / name
    save_model_dir(model, out_dir, dtype=dtype)
    model = load_model_dir(out_dir, torch.float64)  # the weights exactly as stored
    tokens = golden_tokens(cfg)
    logits = reference_logits(model, tokens, name)
    check_non_degenerate(model, tokens, logits, name)
    (out_dir / "golden.json").write_text(
        json.dumps({"tokens": tokens.tolist(), "vocab_size": cfg.vocab_size}) + "\n")
    logits.numpy().astype("<f4").tofile(out_dir / "golden_logits.f32")
    if dtype == "int8":
        int8_activation_logits(out_dir, tokens, name).numpy().astype("<f4").tofile(
            out_dir / INT8_ACTIVATIONS_FILE)
    if name in F16_KV_CACHE_VARIANTS:
        f16_kv_cache_logits(out_dir, tokens, name).numpy().astype("<f4").tofile(
            out_dir / F16_KV_CACHE_FILE)
    spread = (logits.max(-1).values - logits.min(-1).values)
    print(f"{name:22s} {dtype:4s} logits range per row {spread.min():.2f}..{spread.max():.2f}")


def check_variant(out_root: Path, name: str) -> bool:
    out_dir = out_root / name
    model = load_model_dir(out_dir, torch.float64)
    golden = json.loads((out_dir / "golden.json").read_text())
    tokens = torch.tensor(golden["tokens"])
    expected = np.fromfile(out_dir / "golden_logits.f32", dtype="<f4")
    expected = expected.reshape(len(golden["tokens"]), golden["vocab_size"])
    logits = reference_logits(model, tokens, name).numpy()
    diff = float(np.abs(logits - expected).max())
    ok = diff <= CHECK_TOLERANCE
    print(f"{name:22s} max |reference - committed| = {diff:.3g} {'ok' if ok else 'MISMATCH'}")
    for logits_file, mode_logits, mode in (
            (INT8_ACTIVATIONS_FILE, int8_activation_logits, "int8 activations"),
            (F16_KV_CACHE_FILE, f16_kv_cache_logits, "f16 KV cache")):
        if (out_dir / logits_file).exists():
            expected = np.fromfile(out_dir / logits_file, dtype="<f4").reshape(logits.shape)
            diff = float(np.abs(mode_logits(out_dir, tokens, name).numpy() - expected).max())
            ok = ok and diff <= CHECK_TOLERANCE
            print(f"{name:22s} {mode}: max |reference - committed| = {diff:.3g}")
    return ok


def main() -> int:
    torch.set_num_threads(1)  # the same reduction order on every machine
    return run_golden_cli(__doc__.split("\n\n")[0], VARIANTS,
                          REPO / "tests" / "golden" / "models", write_variant, check_variant)


if __name__ == "__main__":
    sys.exit(main())
