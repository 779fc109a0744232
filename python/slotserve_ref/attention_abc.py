"""ABC with learned control (docs/MODEL_FORMAT.md "The attention kinds"; Peng et al. 2022, eq. 7 +
appendix B.1).

Each head keeps M memory slots. Token j is written into slot m with weight exp(s_j[m]), where
s = slot_proj(x); the slot's key/value is the weight-normalised average of what was written,
K̄_t[m] = Σ_{j<=t} exp(s_j[m]) k_j / Σ_{j<=t} exp(s_j[m]) (likewise V̄), and the query attends
over the M slots: out = softmax(K̄ q / sqrt(d)) V̄.
"""

import math
from typing import Dict

import torch
from torch import nn

from .config import ModelConfig
from .heads import ProjectedAttention, causal_mask, merge_heads, split_heads


class AbcAttention(ProjectedAttention):
    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg.d_model, cfg.n_heads)
        self.slots = cfg.attention.slots
        self.slot_proj = nn.Linear(cfg.d_model, self.n_heads * self.slots)

    def _project(self, x: torch.Tensor):
        q = split_heads(self.q_proj(x), self.n_heads)
        k = split_heads(self.k_proj(x), self.n_heads)
        v = split_heads(self.v_proj(x), self.n_heads)
        s = split_heads(self.slot_proj(x), self.n_heads)  # [..., H, M]
        return q, k, v, s

    def _read(self, q: torch.Tensor, k_bar: torch.Tensor, v_bar: torch.Tensor) -> torch.Tensor:
        """q [..., H, d], slots [..., H, M, d] -> [..., H, d]."""
        scores = torch.einsum("...hmd,...hd->...hm", k_bar, q) / math.sqrt(self.head_dim)
        return torch.einsum("...hm,...hmd->...hd", torch.softmax(scores, dim=-1), v_bar)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Parallel form over a whole sequence, x [B, T, E]: the slot averages of every prefix
        are one causal softmax over time per slot (a masked [T, T] matrix), not a recurrence."""
        q, k, v, s = self._project(x)
        t = x.shape[1]
        # weights[b, h, m, t, j] = softmax over j <= t of s[b, j, h, m]
        logits = s.permute(0, 2, 3, 1).unsqueeze(-2).expand(-1, -1, -1, t, -1)
        logits = logits.masked_fill(~causal_mask(t, x.device), float("-inf"))
        weights = torch.softmax(logits, dim=-1)
        k_bar = torch.einsum("bhmtj,bjhd->bthmd", weights, k)
        v_bar = torch.einsum("bhmtj,bjhd->bthmd", weights, v)
        return self.o_proj(merge_heads(self._read(q, k_bar, v_bar)))

    def new_state(self, batch: int, dtype: torch.dtype, device=None) -> Dict[str, torch.Tensor]:
        """All zeros is empty (as in the C++ arena): where z == 0 the running max m is -inf."""
        h, m, d = self.n_heads, self.slots, self.head_dim
        zeros = lambda *shape: torch.zeros(batch, *shape, dtype=dtype, device=device)
        return {"k": zeros(h, m, d), "v": zeros(h, m, d), "z": zeros(h, m), "m": zeros(h, m)}

    def step(self, x: torch.Tensor, state: Dict[str, torch.Tensor], positions: torch.Tensor):
        """Recurrent form: one token per batch row, x [B, E]. z, K~ and V~ are kept scaled by
        exp(-m) with m the running max of the slot logits, so nothing overflows."""
        del positions  # ABC's state does not depend on the position
        q, k, v, s = self._project(x)
        z = state["z"]
        m_old = torch.where(z > 0, state["m"], torch.full_like(z, float("-inf")))
        m_new = torch.maximum(m_old, s)
        c = torch.exp(m_old - m_new)  # 0 for an empty slot
        w = torch.exp(s - m_new)
        z = c * z + w
        k_tilde = c.unsqueeze(-1) * state["k"] + w.unsqueeze(-1) * k.unsqueeze(-2)
        v_tilde = c.unsqueeze(-1) * state["v"] + w.unsqueeze(-1) * v.unsqueeze(-2)
        k_bar = k_tilde / z.unsqueeze(-1)
        v_bar = v_tilde / z.unsqueeze(-1)
        out = self.o_proj(merge_heads(self._read(q, k_bar, v_bar)))
        return out, {"k": k_tilde, "v": v_tilde, "z": z, "m": m_new}
