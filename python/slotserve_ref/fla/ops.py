"""The elementwise and small pieces of fla's ABC/GSA models, written from fla's definitions
(file and function named at each) as plain float64 torch: norms, activations, the SwiGLU MLP,
rotary positions, the short causal convolution (step and chunk forms) and GSA's gates."""

from __future__ import annotations

import math
from typing import Optional, Tuple

import torch

from .config import ROPE_BASE


def silu(x: torch.Tensor) -> torch.Tensor:
    """swish / silu, x·sigmoid(x) (fla/modules/activations.py swish_fwd_kernel)."""
    return x * torch.sigmoid(x)


def rms_norm(x: torch.Tensor, weight: Optional[torch.Tensor], eps: float) -> torch.Tensor:
    """x / sqrt(mean(x²) + eps) · weight over the last axis (fla/modules/layernorm.py
    rms_norm_ref); no weight when the norm has no elementwise affine."""
    y = x / torch.sqrt(x.square().mean(dim=-1, keepdim=True) + eps)
    return y if weight is None else y * weight


def gated_rms_norm(x: torch.Tensor, gate: torch.Tensor, weight: Optional[torch.Tensor],
                   eps: float) -> torch.Tensor:
    """fla/modules/fused_norm_gate.py FusedRMSNormGated (activation "swish"):
    rms_norm(x)·weight·silu(gate)."""
    return rms_norm(x, weight, eps) * silu(gate)


def swiglu_mlp(x: torch.Tensor, gate_w: torch.Tensor, up_w: torch.Tensor,
               down_w: torch.Tensor) -> torch.Tensor:
    """fla/modules/mlp.py GatedMLP with hidden_act swish: down(silu(gate(x)) · up(x))."""
    return (silu(x @ gate_w.T) * (x @ up_w.T)) @ down_w.T


def rotary(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """fla/modules/rotary.py RotaryEmbedding, non-interleaved (GPT-NeoX halves), base 10000:
    x [T, H, d] at absolute positions [T]; pair (i, i + d/2) is rotated by the angle
    position · base^(−2i/d)."""
    d = x.shape[-1]
    inv_freq = 1.0 / ROPE_BASE ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = positions.to(torch.float64)[:, None] * inv_freq[None, :]   # [T, d/2]
    cos, sin = torch.cos(angle)[:, None, :], torch.sin(angle)[:, None, :]
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def causal_conv_step(x: torch.Tensor, window: torch.Tensor, weight: torch.Tensor
                     ) -> Tuple[torch.Tensor, torch.Tensor]:
    """One token of fla/modules/conv/short_conv.py ShortConvolution (depthwise, no bias,
    activation silu). x [C]; window [W−1, C] holds the previous W−1 inputs, oldest first;
    weight [C, 1, W], tap W−1 multiplying the current input. Returns (y [C], new window)."""
    taps = torch.cat([window, x[None, :]], dim=0)                   # [W, C]
    y = silu((taps * weight[:, 0, :].T).sum(dim=0))
    return y, taps[1:]


def causal_conv_chunk(x: torch.Tensor, window: torch.Tensor, weight: torch.Tensor
                      ) -> Tuple[torch.Tensor, torch.Tensor]:
    """The same convolution over a chunk x [T, C] continuing from `window` [W−1, C], as one
    strided view (output t sees inputs t−W+1 … t). Returns (y [T, C], the last W−1 inputs)."""
    w = weight.shape[-1]
    padded = torch.cat([window, x], dim=0)                         # [W−1+T, C]
    frames = padded.unfold(0, w, 1)                                # [T, C, W]
    y = silu((frames * weight[:, 0, :][None]).sum(dim=-1))
    return y, padded[padded.shape[0] - (w - 1):]


def gsa_gates(f_logits: torch.Tensor, normalizer: float) -> Tuple[torch.Tensor, torch.Tensor]:
    """fla/layers/gsa.py GatedSlotAttention.forward: the per-slot log forget gate
    g = logsigmoid(f)/gate_logit_normalizer (≤ 0) and the write weight s = 1 − exp(g)."""
    log_decay = torch.nn.functional.logsigmoid(f_logits) / normalizer
    return log_decay, -torch.expm1(log_decay)


def gsa_feature_map(x: torch.Tensor, kind: str, t2r_weight: Optional[torch.Tensor]) -> torch.Tensor:
    """fla/modules/feature_map.py SwishFeatureMap / ReLUFeatureMap / T2RFeatureMap
    (relu(x W^T), one [d, d] matrix shared by every head)."""
    if kind == "swish":
        return silu(x)
    if kind == "relu":
        return torch.relu(x)
    return torch.relu(x @ t2r_weight.T)


def softmax_scale(head_k_dim: int) -> float:
    """ABC's query scale, head_k_dim^−1/2 (fla/ops/abc/chunk.py ChunkABCFunction.forward)."""
    return 1.0 / math.sqrt(head_k_dim)
