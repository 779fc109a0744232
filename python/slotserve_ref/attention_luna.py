"""Causal Luna, decoder-only (docs/MODEL_FORMAT.md "The attention kinds"; Ma et al. 2021, §3.3).

P (luna_p) is a learned constant per layer, never updated by the sequence. Each token is packed
into L slots with weights p_t = act(pc_t . pq^T), pq = pq_proj(luna_p) / sqrt(d); the state sums
A = Σ k (x) p and C = Σ p (x) v, and the query unpacks: a = softmax((q/sqrt(d)) . A / t),
out = a . C / t, t = tokens seen including the current one.
"""

import math
from typing import Dict

import torch
import torch.nn.functional as F
from torch import nn

from .config import ModelConfig
from .heads import ProjectedAttention, causal_mask, merge_heads, split_heads


def softplus_ln2(u: torch.Tensor) -> torch.Tensor:
    """softplus with beta = ln 2: (1/beta) log(1 + exp(beta u)); equals 1 at 0."""
    beta = math.log(2.0)
    return F.softplus(beta * u) / beta


def elu_plus_one(u: torch.Tensor) -> torch.Tensor:
    return F.elu(u) + 1.0


class LunaAttention(ProjectedAttention):
    def __init__(self, cfg: ModelConfig):
        att = cfg.attention
        super().__init__(cfg.d_model, cfg.n_heads, with_v_proj=not att.tie_kv)
        e = cfg.d_model
        self.length = att.length
        self.tie_kv = att.tie_kv
        self.activation = elu_plus_one if att.activation == "elu1" else softplus_ln2
        self.luna_p = nn.Parameter(torch.empty(att.length, e))
        self.pq_proj = nn.Linear(e, e)
        self.pc_proj = nn.Linear(e, e)

    def packed_queries(self) -> torch.Tensor:
        """pq = pq_proj(luna_p) / sqrt(d) as [H, L, d]; a per-layer constant."""
        pq = split_heads(self.pq_proj(self.luna_p), self.n_heads) / math.sqrt(self.head_dim)
        return pq.permute(1, 0, 2)

    def _project(self, x: torch.Tensor):
        q = split_heads(self.q_proj(x), self.n_heads) / math.sqrt(self.head_dim)
        k = split_heads(self.k_proj(x), self.n_heads)
        v = k if self.tie_kv else split_heads(self.v_proj(x), self.n_heads)
        pc = split_heads(self.pc_proj(x), self.n_heads)
        p = self.activation(torch.einsum("...hd,hld->...hl", pc, self.packed_queries()))
        return q, k, v, p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Parallel form, x [B, T, E]: the prefix sums A_t, C_t are never built; instead
        q_t . A_t = Σ_{j<=t} (q_t . k_j) p_j and a_t . C_t = Σ_{j<=t} (a_t . p_j) v_j as masked
        [T, T] matrices."""
        q, k, v, p = self._project(x)
        t = x.shape[1]
        mask = causal_mask(t, x.device)
        count = torch.arange(1, t + 1, dtype=x.dtype, device=x.device)  # tokens seen at t
        qk = torch.einsum("bthd,bjhd->bhtj", q, k).masked_fill(~mask, 0.0)
        unpack_logits = torch.einsum("bhtj,bjhl->bthl", qk, p) / count[:, None, None]
        a = torch.softmax(unpack_logits, dim=-1)
        ap = torch.einsum("bthl,bjhl->bhtj", a, p).masked_fill(~mask, 0.0)
        out = torch.einsum("bhtj,bjhd->bthd", ap, v) / count[:, None, None]
        return self.o_proj(merge_heads(out))

    def new_state(self, batch: int, dtype: torch.dtype, device=None) -> Dict[str, torch.Tensor]:
        h, d, l = self.n_heads, self.head_dim, self.length
        return {"a": torch.zeros(batch, h, d, l, dtype=dtype, device=device),
                "c": torch.zeros(batch, h, l, d, dtype=dtype, device=device)}

    def step(self, x: torch.Tensor, state: Dict[str, torch.Tensor], positions: torch.Tensor):
        """Recurrent form: x [B, E], positions [B] (tokens already absorbed); state A [B, H, d, L],
        C [B, H, L, d]."""
        q, k, v, p = self._project(x)
        a_state = state["a"] + k.unsqueeze(-1) * p.unsqueeze(-2)
        c_state = state["c"] + p.unsqueeze(-1) * v.unsqueeze(-2)
        t = (positions + 1).to(x.dtype)[:, None, None]  # [B, 1, 1]
        a = torch.softmax(torch.einsum("bhd,bhdl->bhl", q, a_state) / t, dim=-1)
        out = torch.einsum("bhl,bhld->bhd", a, c_state) / t
        return self.o_proj(merge_heads(out)), {"a": a_state, "c": c_state}
