"""Int8 weight-only storage of model directories, decoder-only and encoder–decoder (issue 16,
item 1).

Why: decoding one token reads every weight matrix once, so storing the matrices in one byte per
element (instead of F32's four) cuts the bytes the engine moves per token. This module is the
one definition of the format shared by the writer (model_dir.save_model_dir with dtype "int8"),
the reader (model_dir.load_model_dir) and the tests, so the C++ loader has a single rule to
match.

In model.safetensors a matrix `NAME` may be stored as

  NAME          I8   [rows, cols]   q, signed int8, the matrix's shape unchanged
  NAME_scale    F32  [rows]         s, one scale per row (output channel / vocabulary row)

and means W[r, i] = float(q[r, i]) * s[r]. config.json does not change: the dtype is in the
tensors.

Which tensors are quantized: every 2-D tensor of the model's tensor table whose name ends in
".weight", i.e. the weight of every Linear layer (q/k/v/o_proj, slot_proj, gate_proj, pq/pc_proj,
ffn.up, ffn.down), tok_embed.weight (per vocabulary row) and lm_head.weight when present. The
norms' ".weight" are vectors and stay F32, as do all biases and the attention constants that are
not Linear weights (rfa_random, rfa_sigma, luna_p, linformer_proj).

Quantization of row r, in float64 from the model's weights (the same weights always give the
same bytes):

  s[r] = float32(max_i |W[r, i]| / 127)                      (the F32 value that is stored)
  q[r, i] = clamp(round_half_even(W[r, i] / s[r]), -127, 127)
  an all-zero row (s[r] == 0) has q = 0

q is divided by the stored (F32-rounded) scale, not by the float64 quotient, so every
dequantized weight q * s lies within s/2 of W; the row's largest |W| still maps to ±127 (the
F32 rounding of s moves max/s less than 1e-5 away from 127).
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Sequence, Tuple

import torch

from .safetensors_io import safetensors_dtype_name

SCALE_SUFFIX = "_scale"
Q_MAX = 127


class Int8WeightsError(ValueError):
    """A tensor cannot be quantized, or int8 tensors in a file break the format."""


def scale_name(name: str) -> str:
    """The scale tensor of matrix `name`: "layers.0.attn.q_proj.weight_scale"."""
    return name + SCALE_SUFFIX


def is_quantized(name: str, shape: Sequence[int]) -> bool:
    """The rule: a tensor of the model's table is stored int8 when its name ends in ".weight"
    and it is 2-D (Linear weights, tok_embed, lm_head; norm weights are 1-D)."""
    return name.endswith(".weight") and len(shape) == 2


def quantized_names(expected: Mapping[str, Sequence[int]]) -> List[str]:
    """The names of `expected` (a tensor table: name -> shape) that int8 stores as I8, sorted."""
    return sorted(name for name, shape in expected.items() if is_quantized(name, shape))


def quantize_rows(w: torch.Tensor, name: str = "matrix") -> Tuple[torch.Tensor, torch.Tensor]:
    """(q int8 [rows, cols], scale float32 [rows]) of a 2-D float matrix, by the rule above;
    `name` only labels the errors."""
    if w.dim() != 2:
        raise Int8WeightsError(f"{name}: int8 quantizes 2-D matrices, got shape {list(w.shape)}")
    if not w.is_floating_point():
        raise Int8WeightsError(f"{name}: int8 quantizes float matrices, got {w.dtype}")
    w = w.detach().to(torch.float64)
    bad = ~torch.isfinite(w)
    if bad.any():
        r, i = (int(x) for x in bad.nonzero()[0])
        raise Int8WeightsError(f"{name}: element [{r}, {i}] is {w[r, i].item()}; int8 "
                               f"quantizes finite weights only")
    scale = (w.abs().amax(dim=1) / Q_MAX).to(torch.float32) if w.shape[1] else \
        torch.zeros(w.shape[0], dtype=torch.float32)
    divisor = scale.to(torch.float64)
    zero_rows = divisor == 0
    # An all-zero row (or one whose scale underflows F32 to 0) keeps q = 0.
    q = torch.round(w / torch.where(zero_rows, torch.ones_like(divisor), divisor)[:, None])
    q = q.clamp(-Q_MAX, Q_MAX).masked_fill(zero_rows[:, None], 0.0)
    return q.to(torch.int8).contiguous(), scale.contiguous()


def dequantize_rows(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """float64 q[r, i] * scale[r] (exact: an int8 times an F32 fits float64's mantissa)."""
    return q.to(torch.float64) * scale.to(torch.float64)[:, None]


def quantize_tensors(tensors: Mapping[str, torch.Tensor],
                     expected: Mapping[str, Sequence[int]]) -> Dict[str, torch.Tensor]:
    """The tensors to write at dtype int8: each quantized name of `expected` as I8 plus its
    `_scale`, everything else as F32. `tensors` already match `expected` by name and shape."""
    quantized = set(quantized_names(expected))
    out: Dict[str, torch.Tensor] = {}
    for name, tensor in tensors.items():
        if name in quantized:
            if scale_name(name) in tensors:
                raise Int8WeightsError(f"tensor {scale_name(name)} would collide with the "
                                       f"scale of int8 matrix {name}")
            out[name], out[scale_name(name)] = quantize_rows(tensor, name)
        else:
            out[name] = tensor.detach().to(torch.float32).contiguous()
    return out


def _what_it_is(name: str, expected: Mapping[str, Sequence[int]]) -> str:
    if name not in expected:
        return "is not a tensor of this model"
    shape = list(expected[name])
    return f"is a {'vector' if len(shape) == 1 else 'constant'} of shape {shape}"


def dequantize_tensors(tensors: Mapping[str, torch.Tensor],
                       expected: Mapping[str, Sequence[int]],
                       source: str) -> Dict[str, torch.Tensor]:
    """The tensors of a file with each I8 matrix replaced by its float64 q * scale and the
    `_scale` tensors consumed; float tensors pass through unchanged (a file may mix I8 and float
    matrices). Refuses, naming the tensor: an I8 tensor that the rule does not quantize, an I8
    matrix without its F32 [rows] scale, a scale without its I8 matrix. Missing, extra or
    mis-shaped tensors otherwise are left to the caller's tensor-table check."""
    out: Dict[str, torch.Tensor] = {}
    for name, tensor in tensors.items():
        if name.endswith(SCALE_SUFFIX) and name not in expected:
            matrix = name[:-len(SCALE_SUFFIX)]
            if matrix not in tensors:
                raise Int8WeightsError(f"{source}: tensor {name} is an int8 scale without its "
                                       f"matrix: there is no tensor {matrix}")
            if tensors[matrix].dtype != torch.int8:
                raise Int8WeightsError(
                    f"{source}: tensor {name} is an int8 scale, but its matrix {matrix} is "
                    f"stored as {safetensors_dtype_name(tensors[matrix].dtype)}, not I8")
            continue  # read with its matrix
        if tensor.dtype != torch.int8:
            out[name] = tensor
            continue
        if name not in expected or not is_quantized(name, expected[name]):
            raise Int8WeightsError(
                f"{source}: tensor {name} is stored as I8, but only 2-D '.weight' matrices "
                f"(Linear weights, tok_embed.weight, lm_head.weight) may be int8; {name} "
                f"{_what_it_is(name, expected)}")
        if tuple(tensor.shape) != tuple(expected[name]):
            raise Int8WeightsError(f"{source}: tensor {name} has shape {list(tensor.shape)}, "
                                   f"expected {list(expected[name])}")
        scale = tensors.get(scale_name(name))
        if scale is None:
            raise Int8WeightsError(f"{source}: int8 tensor {name} has no scale: expected "
                                   f"{scale_name(name)}, F32 [{tensor.shape[0]}]")
        if scale.dtype != torch.float32:
            raise Int8WeightsError(f"{source}: tensor {scale_name(name)} is "
                                   f"{safetensors_dtype_name(scale.dtype)}, expected F32")
        if tuple(scale.shape) != (tensor.shape[0],):
            raise Int8WeightsError(f"{source}: tensor {scale_name(name)} has shape "
                                   f"{list(scale.shape)}, expected [{tensor.shape[0]}] (one "
                                   f"scale per row of {name})")
        out[name] = dequantize_rows(tensor, scale)
    return out
