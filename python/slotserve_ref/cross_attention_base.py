"""What every cross-attention kind of docs/ARCHITECTURE.md "Encoder–decoder models" shares.

A cross kind has two halves, matching what the engine does with a request:
  build_memory(X)  once per request, in the prefill: X [B, k, E] is the encoder output
                   (encoder.final_norm of its last layer); the result is the request's cross
                   memory, a dict of tensors with a leading batch axis;
  step(x_t, ...)   once per decoded token: reads the memory with q_t = cross.q_proj(x_t).
forward() is the parallel (teacher-forced) form over all target positions at once. Kinds whose
read does not depend on the position or on earlier steps (all but srformer) implement only
read(); srformer also carries an explicit per-request state (new_state/step).
"""

import math
from typing import Dict

import torch

from .heads import ProjectedAttention, merge_heads, split_heads

Memory = Dict[str, torch.Tensor]
CrossState = Dict[str, torch.Tensor]


def attend(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """out = softmax(keys q / sqrt(d))^T values per head: q [B, T, H, d], keys/values
    [B, H, n, d] -> [B, T, H, d]. The read of the softmax, abc and luna cross kinds."""
    scores = torch.einsum("bthd,bhnd->bthn", q, keys) / math.sqrt(q.shape[-1])
    return torch.einsum("bthn,bhnd->bthd", torch.softmax(scores, dim=-1), values)


class CrossAttention(ProjectedAttention):
    """q_proj, k_proj, v_proj, o_proj under `cross.` (docs/ARCHITECTURE.md "Encoder–decoder
    models"); subclasses add their kind's
    tensors and define build_memory and read."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__(d_model, n_heads)

    def project_source(self, source: torch.Tensor):
        """X [B, k, E] -> K, V per head as [B, H, k, d]."""
        k = split_heads(self.k_proj(source), self.n_heads).transpose(1, 2)
        v = split_heads(self.v_proj(source), self.n_heads).transpose(1, 2)
        return k, v

    def query(self, x: torch.Tensor) -> torch.Tensor:
        """x [..., E] (after cross_norm) -> q [..., H, d]."""
        return split_heads(self.q_proj(x), self.n_heads)

    def build_memory(self, source: torch.Tensor) -> Memory:
        raise NotImplementedError

    def read(self, q: torch.Tensor, memory: Memory) -> torch.Tensor:
        """q [B, T, H, d] -> [B, T, H, d] (before o_proj)."""
        raise NotImplementedError

    def forward(self, x: torch.Tensor, memory: Memory) -> torch.Tensor:
        """Parallel form: x [B, T, E] at target positions 0..T-1 -> [B, T, E]."""
        return self.o_proj(merge_heads(self.read(self.query(x), memory)))

    def new_state(self, batch: int, dtype: torch.dtype, device=None) -> CrossState:
        """Per-request state carried from step to step; empty for the position-free kinds."""
        del batch, dtype, device
        return {}

    def step(self, x: torch.Tensor, memory: Memory, state: CrossState,
             positions: torch.Tensor):
        """Recurrent form: x [B, E], positions [B] (target tokens already decoded)."""
        del positions
        out = self.read(self.query(x).unsqueeze(1), memory)[:, 0]
        return self.o_proj(merge_heads(out)), state
