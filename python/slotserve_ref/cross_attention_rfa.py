"""RFA cross attention (docs/ARCHITECTURE.md "Encoder–decoder models"; Peng et al. 2021, its MT
cross attention): the source is
summed into S = Σ_i phi(K_i) (x) V_i and z = Σ_i phi(K_i) with phi of docs/MODEL_FORMAT.md "The
attention kinds" (no gate: the
source has no order to forget along); out = phi(q)^T S / max(phi(q) . z, eps)."""

import torch
from torch import nn

from .attention_rfa import random_feature_map
from .cross_attention_base import CrossAttention, Memory
from .seq2seq_config import Seq2seqConfig


class RfaCrossAttention(CrossAttention):
    def __init__(self, cfg: Seq2seqConfig):
        super().__init__(cfg.d_model, cfg.n_heads)
        cross = cfg.cross_attention
        self.features = cross.features
        self.feature_scale = cross.feature_scale
        self.eps = cross.eps
        self.norm_eps = cross.norm_eps
        self.interleave = cross.layout == "interleave"
        self.rfa_random = nn.Parameter(torch.empty(cfg.n_heads, cross.features, cfg.head_dim))
        self.rfa_sigma = nn.Parameter(torch.empty(cfg.n_heads, cfg.head_dim))

    def build_memory(self, source) -> Memory:
        k, v = self.project_source(source)                    # [B, H, k, d]
        phi_k = random_feature_map(k.transpose(1, 2), self)   # [B, k, H, 2D]
        return {"s": torch.einsum("bihf,bhid->bhfd", phi_k, v), "z": phi_k.sum(dim=1)}

    def read(self, q, memory: Memory):
        phi_q = random_feature_map(q, self)                   # [B, T, H, 2D]
        numerator = torch.einsum("bthf,bhfd->bthd", phi_q, memory["s"])
        denominator = torch.einsum("bthf,bhf->bth", phi_q, memory["z"]).clamp_min(self.eps)
        return numerator / denominator.unsqueeze(-1)
