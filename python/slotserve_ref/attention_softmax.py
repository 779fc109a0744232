"""Causal multi-head softmax attention with a per-request KV cache: the growing-memory baseline
the constant-state kinds are measured against (docs/MODEL_FORMAT.md "The attention kinds")."""

import math
from typing import Dict

import torch

from .config import ModelConfig
from .heads import ProjectedAttention, causal_mask, merge_heads, split_heads


class SoftmaxAttention(ProjectedAttention):
    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg.d_model, cfg.n_heads)
        self.max_context = cfg.attention.max_context

    def _project(self, x: torch.Tensor):
        return (split_heads(self.q_proj(x), self.n_heads), split_heads(self.k_proj(x), self.n_heads),
                split_heads(self.v_proj(x), self.n_heads))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Parallel form, x [B, T, E]."""
        t = x.shape[1]
        if t > self.max_context:
            raise ValueError(f"sequence of {t} tokens exceeds attention.max_context "
                             f"{self.max_context}")
        q, k, v = self._project(x)
        scores = torch.einsum("bthd,bjhd->bhtj", q, k) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(~causal_mask(t, x.device), float("-inf"))
        out = torch.einsum("bhtj,bjhd->bthd", torch.softmax(scores, dim=-1), v)
        return self.o_proj(merge_heads(out))

    def new_state(self, batch: int, dtype: torch.dtype, device=None) -> Dict[str, torch.Tensor]:
        shape = (batch, self.max_context, self.n_heads, self.head_dim)
        return {"k": torch.zeros(shape, dtype=dtype, device=device),
                "v": torch.zeros(shape, dtype=dtype, device=device)}

    def step(self, x: torch.Tensor, state: Dict[str, torch.Tensor], positions: torch.Tensor):
        """Recurrent form: x [B, E]; the token at position p is cached at row p."""
        if int(positions.max()) >= self.max_context:
            raise ValueError(f"position {int(positions.max())} exceeds attention.max_context "
                             f"{self.max_context}")
        q, k, v = self._project(x)
        rows = torch.arange(x.shape[0], device=x.device)
        k_cache, v_cache = state["k"].clone(), state["v"].clone()
        k_cache[rows, positions] = k
        v_cache[rows, positions] = v
        scores = torch.einsum("bhd,bjhd->bhj", q, k_cache) / math.sqrt(self.head_dim)
        visible = torch.arange(self.max_context, device=x.device)[None, :] <= positions[:, None]
        scores = scores.masked_fill(~visible[:, None, :], float("-inf"))
        out = torch.einsum("bhj,bjhd->bhd", torch.softmax(scores, dim=-1), v_cache)
        return self.o_proj(merge_heads(out)), {"k": k_cache, "v": v_cache}
