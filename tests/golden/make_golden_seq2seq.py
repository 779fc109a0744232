#!/usr/bin/env python3
"""Generates the encoder–decoder golden data the C++ engine is checked against (docs/ARCHITECTURE.md
"Tests", "Encoder–decoder models"): for every cross kind (ConvLuna's filters included) with at least two decoder self kinds,
a small random-weight model directory, a source, a target and the reference's logits at every
target position:

  tests/golden/seq2seq/<variant>/config.json        "format": "slotserve-seq2seq"
  tests/golden/seq2seq/<variant>/model.safetensors  F32 weights, or int8 weight-only (the
                                                      *_int8 variants)
  tests/golden/seq2seq/<variant>/golden.json        {"source": [...], "target": [...],
                                                      "vocab_size": V}
  tests/golden/seq2seq/<variant>/golden_logits.f32  little-endian float32, len(target) rows x V;
      row t = logits after the decoder has read [decoder_start_id, target[0], .., target[t-1]]
      (decoder positions 0..t), i.e. the prediction of target[t]
  tests/golden/seq2seq/<variant>/golden_logits_int8_activations.f32   the *_int8 variants: the
      same with every matrix product's input rounded to int8 per block of 32 (the engine's
      --int8-activations; slotserve_ref/int8_activations.py)

The logits come from the model as re-loaded from the written directory, in float64, with the
recurrent form (source prefilled once, then one decoder token at a time); the teacher-forced
parallel form must agree before anything is written.

Usage (from the repository root):
  PYTHONPATH=python /usr/bin/python3 tests/golden/make_golden_seq2seq.py            # all
  PYTHONPATH=python /usr/bin/python3 tests/golden/make_golden_seq2seq.py --only srformer_abc
  PYTHONPATH=python /usr/bin/python3 tests/golden/make_golden_seq2seq.py --check  # writes nothing
"""

import json
import sys
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_golden import CHECK_TOLERANCE, PARALLEL_TOLERANCE  # noqa: E402
from slotserve_ref.golden_cli import run_golden_cli  # noqa: E402
from slotserve_ref.init import randomize_  # noqa: E402
from slotserve_ref.int8_activations import use_int8_activations_  # noqa: E402
from slotserve_ref.seq2seq_config import Seq2seqConfig, merge_seq2seq_config_dict  # noqa: E402
from slotserve_ref.seq2seq_model import Seq2seqModel  # noqa: E402
from slotserve_ref.seq2seq_model_dir import (load_seq2seq_model_dir,  # noqa: E402
                                             save_seq2seq_model_dir)

SOURCE_LENGTH = 13
TARGET_LENGTH = 12
SEQUENCE_SEED = 4321

BASE = {
    "vocab_size": 29, "d_model": 16, "n_heads": 2, "d_ffn": 32, "activation": "gelu",
    "norm_eps": 1e-5, "position": "sinusoidal", "position_offset": 0, "tie_embeddings": True,
    "embed_scale": 4.0, "bos_id": 1, "eos_id": 2, "decoder_start_id": 2,
    "encoder": {"n_layers": 1, "max_source_tokens": 32},
}
SELF = {
    "abc": {"kind": "abc", "slots": 4},
    "softmax": {"kind": "softmax", "max_context": 32},
}
RFA = {"kind": "rfa", "features": 6, "feature_scale": 0.5, "eps": 0.25, "norm_eps": 1e-3}
LUNA = {"kind": "luna", "length": 4}
CROSS = {
    "softmax": {"kind": "softmax"},
    "abc": {"kind": "abc", "slots": 5},
    "rfa": dict(RFA, layout="concat"),
    "rfa_interleave": dict(RFA, layout="interleave"),
    "luna": dict(LUNA, temperature=1.0, filter=None),
    "convluna_conv": dict(LUNA, temperature=0.5, filter={"op": "conv", "kernel": 3, "stride": 2}),
    "convluna_maxpool": dict(LUNA, temperature=0.7,
                             filter={"op": "maxpool", "kernel": 2, "stride": 3}),
    # m = ceil(13/4) = 4 segments over target_length 8: the segment changes at t = 0, 2, 4, 6
    "srformer": {"kind": "srformer", "segment": 4, "target_length": 8},
}

# variant -> (cross, self kind, extra top-level overrides, init seed)
VARIANTS = {
    "softmax_abc": ("softmax", "abc", {}, 101),
    "softmax_softmax": ("softmax", "softmax", {}, 102),
    "abc_abc": ("abc", "abc", {}, 111),
    "abc_softmax": ("abc", "softmax", {}, 112),
    "rfa_abc": ("rfa", "abc", {}, 121),
    "rfa_interleave_softmax": ("rfa_interleave", "softmax",
                               {"tie_embeddings": False, "activation": "relu"}, 122),
    "luna_abc": ("luna", "abc", {}, 131),
    "convluna_conv_abc": ("convluna_conv", "abc", {}, 132),
    "convluna_conv_softmax": ("convluna_conv", "softmax", {"position_offset": 2}, 133),
    "convluna_maxpool_softmax": ("convluna_maxpool", "softmax", {}, 134),
    "srformer_abc": ("srformer", "abc", {}, 141),
    "srformer_softmax": ("srformer", "softmax", {}, 142),
    # int8 weight-only directories (slotserve_ref/int8_weights.py), one per cross kind: tied
    # tables, and an untied head with its own I8 matrix
    "abc_abc_int8": ("abc", "abc", {}, 151),
    "rfa_interleave_softmax_int8": ("rfa_interleave", "softmax",
                                    {"tie_embeddings": False, "activation": "relu"}, 152),
    "softmax_abc_int8": ("softmax", "abc", {}, 153),
    "convluna_conv_abc_int8": ("convluna_conv", "abc", {}, 154),
    "srformer_softmax_int8": ("srformer", "softmax", {}, 155),
}

# The weight dtype each variant is written in (f32 unless named here).
WEIGHT_DTYPES = {name: "int8" for name in VARIANTS if name.endswith("_int8")}
INT8_ACTIVATIONS_FILE = "golden_logits_int8_activations.f32"


def int8_activation_logits(out_dir: Path, source, target, name: str) -> torch.Tensor:
    """float64 logits of the int8 directory `out_dir` with int8-rounded activations."""
    model = use_int8_activations_(load_seq2seq_model_dir(out_dir, torch.float64))
    return reference_logits(model, source, target, name + " (int8 activations)")


def variant_config(name: str) -> Seq2seqConfig:
    cross, self_kind, extra, _ = VARIANTS[name]
    overrides = dict(BASE, cross_attention=CROSS[cross], **extra,
                     decoder={"n_layers": 2, "attention": SELF[self_kind]})
    return Seq2seqConfig.from_dict(merge_seq2seq_config_dict(overrides), source=name)


def golden_ids(cfg: Seq2seqConfig):
    gen = torch.Generator().manual_seed(SEQUENCE_SEED)
    source = torch.randint(3, cfg.vocab_size, (SOURCE_LENGTH,), generator=gen)
    # As a text source would end (docs/ARCHITECTURE.md "Encoder–decoder models").
    source[-1] = cfg.eos_id
    target = torch.randint(3, cfg.vocab_size, (TARGET_LENGTH,), generator=gen)
    return source, target


def decoder_input(cfg: Seq2seqConfig, target: torch.Tensor) -> torch.Tensor:
    return torch.cat([torch.tensor([cfg.decoder_start_id]), target[:-1]])


@torch.no_grad()
def reference_logits(model: Seq2seqModel, source, target, name: str) -> torch.Tensor:
    """float64 logits [len(target), V] from the recurrent form, checked against the parallel."""
    inputs = decoder_input(model.config, target)[None]
    recurrent, _ = model.decode_recurrent(source[None], inputs)
    diff = (recurrent - model(source[None], inputs)).abs().max().item()
    if diff > PARALLEL_TOLERANCE:
        raise SystemExit(f"{name}: parallel and recurrent forms differ by {diff:.3g} "
                         f"(tolerance {PARALLEL_TOLERANCE})")
    return recurrent[0]


@torch.no_grad()
def check_non_degenerate(model: Seq2seqModel, source, target, logits, name: str) -> None:
    """The data must catch mistakes: logits spread over the vocabulary, every target position
    depends on the source (the cross memory carries it), and srformer's RAF spikes."""
    spread = (logits.max(dim=-1).values - logits.min(dim=-1).values).min().item()
    if spread <= 1.0:
        raise SystemExit(f"{name}: logits vary by only {spread:.3g} within a row, expected > 1")
    altered = source.clone()
    altered[1] = 3 + (altered[1] - 2) % (model.config.vocab_size - 3)
    moved = (reference_logits(model, altered, target, name) - logits).abs().amax(dim=-1)
    if moved.min().item() < 1e-3:
        raise SystemExit(f"{name}: changing source token 1 moves some row by only "
                         f"{moved.min().item():.3g}; the cross memory carries no source")
    if model.config.cross_attention.kind == "srformer":
        _, state = model.decode_recurrent(source[None], decoder_input(model.config, target)[None])
        r = torch.stack([layer["cross"]["r"] for layer in state])
        if not 0 < (r > 0).double().mean().item() < 1:
            raise SystemExit(f"{name}: RAF output R is all zero or all positive")


def write_variant(out_root: Path, name: str) -> None:
    cfg = variant_config(name)
    model = randomize_(Seq2seqModel(cfg).double(), seed=VARIANTS[name][3])
    out_dir = out_root / name
    save_seq2seq_model_dir(model, out_dir, dtype=WEIGHT_DTYPES.get(name, "f32"))
    model = load_seq2seq_model_dir(out_dir, torch.float64)  # the weights exactly as stored
    source, target = golden_ids(cfg)
    logits = reference_logits(model, source, target, name)
    check_non_degenerate(model, source, target, logits, name)
    (out_dir / "golden.json").write_text(json.dumps(
        {"source": source.tolist(), "target": target.tolist(),
         "vocab_size": cfg.vocab_size}) + "\n")
    logits.numpy().astype("<f4").tofile(out_dir / "golden_logits.f32")
    if WEIGHT_DTYPES.get(name) == "int8":
        rounded = int8_activation_logits(out_dir, source, target, name)
        rounded.numpy().astype("<f4").tofile(out_dir / INT8_ACTIVATIONS_FILE)
        print(f"{name:26s} int8 activations move the logits by "
              f"{(rounded - logits).abs().max():.3g}")
    spread = logits.max(-1).values - logits.min(-1).values
    print(f"{name:26s} logits range per row {spread.min():.2f}..{spread.max():.2f}")


def check_variant(out_root: Path, name: str) -> bool:
    out_dir = out_root / name
    model = load_seq2seq_model_dir(out_dir, torch.float64)
    golden = json.loads((out_dir / "golden.json").read_text())
    source, target = torch.tensor(golden["source"]), torch.tensor(golden["target"])
    expected = np.fromfile(out_dir / "golden_logits.f32", dtype="<f4")
    expected = expected.reshape(len(golden["target"]), golden["vocab_size"])
    diff = float(np.abs(reference_logits(model, source, target, name).numpy() - expected).max())
    if WEIGHT_DTYPES.get(name) == "int8":
        rounded = np.fromfile(out_dir / INT8_ACTIVATIONS_FILE, dtype="<f4").reshape(expected.shape)
        recomputed = int8_activation_logits(out_dir, source, target, name).numpy()
        diff = max(diff, float(np.abs(recomputed - rounded).max()))
    ok = diff <= CHECK_TOLERANCE
    print(f"{name:26s} max |reference - committed| = {diff:.3g} {'ok' if ok else 'MISMATCH'}")
    return ok


def main() -> int:
    torch.set_num_threads(1)  # the same reduction order on every machine
    return run_golden_cli(__doc__.split("\n\n")[0], VARIANTS,
                          REPO / "tests" / "golden" / "seq2seq", write_variant, check_variant)


if __name__ == "__main__":
    sys.exit(main())
