"""Luna packing as cross attention, with ConvLuna's filter (docs/ARCHITECTURE.md "Encoder–decoder
models"; Ma et al. 2021 §3.1,
the pack step; ConvLuna: filter the keys/values along the source before packing, sharpen
with a temperature tau < 1).

  K', V' = filter(K), filter(V)            (identity when filter is null)
  P      = cross.pq_proj(cross.luna_p)      per head, L x d
  alpha  = softmax over positions of P K'^T / (sqrt(d) tau)
  K̂ = alpha K',  V̂ = alpha V'              (L x d: the cross memory)
  out    = softmax(K̂ q / sqrt(d))^T V̂
"""

import math
from typing import Optional

import torch
from torch import nn

from .cross_attention_base import CrossAttention, Memory, attend
from .heads import split_heads
from .seq2seq_config import FilterConfig, Seq2seqConfig


def filter_windows(length: int, kernel: int, stride: int, device=None):
    """Window starts 0, stride, 2 stride, ... while < length (ceil(length/stride) windows), each
    covering `kernel` positions; returns (positions [n, kernel] clamped into range, valid
    [n, kernel]: False for taps past the end, which are skipped)."""
    starts = torch.arange(0, length, stride, device=device)
    positions = starts[:, None] + torch.arange(kernel, device=device)[None, :]
    valid = positions < length
    return positions.clamp_max(length - 1), valid


def apply_filter(x: torch.Tensor, spec: FilterConfig, weight: Optional[torch.Tensor],
                 bias: Optional[torch.Tensor]) -> torch.Tensor:
    """x [B, H, k, d] filtered along k -> [B, H, ceil(k/stride), d]. conv: Σ_u w[u] x[start+u]
    + b with one kernel shared by every feature; maxpool: the max over the window."""
    positions, valid = filter_windows(x.shape[2], spec.kernel, spec.stride, x.device)
    taps = x[:, :, positions]                                 # [B, H, n, kernel, d]
    mask = valid[None, None, :, :, None]
    if spec.op == "maxpool":
        return taps.masked_fill(~mask, float("-inf")).amax(dim=3)
    weighted = taps * (weight[None, None, None, :, None] * mask)
    return weighted.sum(dim=3) + bias


class SharedKernel(nn.Module):
    """cross.filter.weight [kernel] and cross.filter.bias [1]: one 1-D kernel for all features."""

    def __init__(self, kernel: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(kernel))
        self.bias = nn.Parameter(torch.empty(1))


class LunaCrossAttention(CrossAttention):
    def __init__(self, cfg: Seq2seqConfig):
        super().__init__(cfg.d_model, cfg.n_heads)
        cross = cfg.cross_attention
        self.length = cross.length
        self.temperature = cross.temperature
        self.filter_spec = cross.filter
        self.luna_p = nn.Parameter(torch.empty(cross.length, cfg.d_model))
        self.pq_proj = nn.Linear(cfg.d_model, cfg.d_model)
        if cross.filter is not None and cross.filter.op == "conv":
            self.filter = SharedKernel(cross.filter.kernel)

    def packing_queries(self) -> torch.Tensor:
        """P = pq_proj(luna_p) as [H, L, d]; a per-layer constant."""
        return split_heads(self.pq_proj(self.luna_p), self.n_heads).transpose(0, 1)

    def filtered_source(self, source: torch.Tensor):
        k, v = self.project_source(source)
        if self.filter_spec is None:
            return k, v
        weight = bias = None
        if self.filter_spec.op == "conv":
            weight, bias = self.filter.weight, self.filter.bias
        return (apply_filter(k, self.filter_spec, weight, bias),
                apply_filter(v, self.filter_spec, weight, bias))

    def build_memory(self, source) -> Memory:
        k, v = self.filtered_source(source)                   # [B, H, n, d]
        scale = math.sqrt(self.head_dim) * self.temperature
        logits = torch.einsum("hld,bhnd->bhln", self.packing_queries(), k) / scale
        alpha = torch.softmax(logits, dim=-1)
        return {"k": alpha @ k, "v": alpha @ v}

    def read(self, q, memory: Memory):
        return attend(q, memory["k"], memory["v"])
