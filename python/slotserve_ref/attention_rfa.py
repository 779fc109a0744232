"""Random feature attention (docs/MODEL_FORMAT.md "The attention kinds"; Peng et al. 2021).

phi(u) = feature_scale * [sin(W~ u^), cos(W~ u^)] with u^ = u / (|u| + norm_eps) and
W~ = rfa_random * rfa_sigma; out = phi(q)^T S / max(phi(q) . z, eps), where S and z sum
phi(k) (x) v and phi(k) over the past, decayed by a learned sigmoid gate when gate=true.
"""

from typing import Dict

import torch
import torch.nn.functional as F
from torch import nn

from .config import ModelConfig
from .heads import ProjectedAttention, causal_mask, merge_heads, split_heads


def random_feature_map(u: torch.Tensor, owner: nn.Module) -> torch.Tensor:
    """phi(u) of docs/MODEL_FORMAT.md "The attention kinds" with the parameters and settings of
    `owner` (rfa_random, rfa_sigma,
    feature_scale, norm_eps, interleave): u [..., H, d] -> [..., H, 2D]. Shared by the
    self-attention kind and the seq2seq cross kind (docs/ARCHITECTURE.md "Encoder–decoder models"),
    which use the same map."""
    w = owner.rfa_random * owner.rfa_sigma.unsqueeze(1)  # [H, D, d]
    u_hat = u / (torch.linalg.vector_norm(u, dim=-1, keepdim=True) + owner.norm_eps)
    angles = torch.einsum("hfd,...hd->...hf", w, u_hat)
    if owner.interleave:
        phi = torch.stack([torch.sin(angles), torch.cos(angles)], dim=-1).flatten(-2)
    else:
        phi = torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)
    return owner.feature_scale * phi


class RfaAttention(ProjectedAttention):
    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg.d_model, cfg.n_heads)
        e, h, d = cfg.d_model, cfg.n_heads, cfg.head_dim
        att = cfg.attention
        self.features = att.features
        self.gate = att.gate
        self.feature_scale = att.feature_scale
        self.eps = att.eps
        self.norm_eps = att.norm_eps
        self.interleave = att.layout == "interleave"
        self.rfa_random = nn.Parameter(torch.empty(h, att.features, d))
        self.rfa_sigma = nn.Parameter(torch.empty(h, d))
        if att.gate:
            self.gate_proj = nn.Linear(e, h)

    def feature_map(self, u: torch.Tensor) -> torch.Tensor:
        """u [..., H, d] -> phi(u) [..., H, 2D] in the configured layout."""
        return random_feature_map(u, self)

    def _project(self, x: torch.Tensor):
        q = split_heads(self.q_proj(x), self.n_heads)
        k = split_heads(self.k_proj(x), self.n_heads)
        v = split_heads(self.v_proj(x), self.n_heads)
        gate_logits = self.gate_proj(x) if self.gate else None  # [..., H]
        return self.feature_map(q), self.feature_map(k), v, gate_logits

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Parallel form, x [B, T, E]: a masked [T, T] kernel matrix phi(q_t).phi(k_j), weighted
        by the product of the gates between j and t (computed from cumulative log-gates)."""
        phi_q, phi_k, v, gate_logits = self._project(x)
        t = x.shape[1]
        mask = causal_mask(t, x.device)
        kernel = torch.einsum("bthf,bjhf->bhtj", phi_q, phi_k)
        if self.gate:
            # weight[t, j] = (prod_{j < i <= t} g_i) * (1 - g_j)
            log_g = F.logsigmoid(gate_logits).permute(0, 2, 1)  # [B, H, T]
            cum = torch.cumsum(log_g, dim=-1)
            log_decay = (cum.unsqueeze(-1) - cum.unsqueeze(-2)).masked_fill(~mask, float("-inf"))
            one_minus_g = torch.sigmoid(-gate_logits).permute(0, 2, 1).unsqueeze(-2)
            kernel = kernel * torch.exp(log_decay) * one_minus_g
        else:
            kernel = kernel.masked_fill(~mask, 0.0)
        numerator = torch.einsum("bhtj,bjhd->bthd", kernel, v)
        denominator = kernel.sum(dim=-1).permute(0, 2, 1).clamp_min(self.eps)  # [B, T, H]
        return self.o_proj(merge_heads(numerator / denominator.unsqueeze(-1)))

    def new_state(self, batch: int, dtype: torch.dtype, device=None) -> Dict[str, torch.Tensor]:
        h, f, d = self.n_heads, 2 * self.features, self.head_dim
        return {"s": torch.zeros(batch, h, f, d, dtype=dtype, device=device),
                "z": torch.zeros(batch, h, f, dtype=dtype, device=device)}

    def step(self, x: torch.Tensor, state: Dict[str, torch.Tensor], positions: torch.Tensor):
        """Recurrent form: one token per batch row, x [B, E]; state S [B, H, 2D, d], z [B, H, 2D]."""
        del positions  # RFA's state does not depend on the position
        phi_q, phi_k, v, gate_logits = self._project(x)
        write_s = phi_k.unsqueeze(-1) * v.unsqueeze(-2)
        if self.gate:
            g = torch.sigmoid(gate_logits)  # [B, H]
            s = g[..., None, None] * state["s"] + (1 - g)[..., None, None] * write_s
            z = g[..., None] * state["z"] + (1 - g)[..., None] * phi_k
        else:
            s = state["s"] + write_s
            z = state["z"] + phi_k
        numerator = torch.einsum("bhf,bhfd->bhd", phi_q, s)
        denominator = torch.einsum("bhf,bhf->bh", phi_q, z).clamp_min(self.eps)
        out = self.o_proj(merge_heads(numerator / denominator.unsqueeze(-1)))
        return out, {"s": s, "z": z}
