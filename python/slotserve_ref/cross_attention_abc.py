"""ABC cross attention (docs/ARCHITECTURE.md "Encoder–decoder models"; Peng et al. 2022, eq. 7
applied to the source as in its MT
setup). Each head compresses the k source positions into M slots: with slot logits
s_i = cross.slot_proj(X_i), alpha = softmax over source positions i for each slot,
K̄ = alpha^T K and V̄ = alpha^T V (M x d); the query reads them like softmax attention."""

import torch
from torch import nn

from .cross_attention_base import CrossAttention, Memory, attend
from .heads import split_heads
from .seq2seq_config import Seq2seqConfig


class AbcCrossAttention(CrossAttention):
    def __init__(self, cfg: Seq2seqConfig):
        super().__init__(cfg.d_model, cfg.n_heads)
        self.slots = cfg.cross_attention.slots
        self.slot_proj = nn.Linear(cfg.d_model, cfg.n_heads * self.slots)

    def build_memory(self, source) -> Memory:
        k, v = self.project_source(source)                              # [B, H, k, d]
        logits = split_heads(self.slot_proj(source), self.n_heads)      # [B, k, H, M]
        alpha = torch.softmax(logits, dim=1)                            # over source positions
        return {"k": torch.einsum("bihm,bhid->bhmd", alpha, k),
                "v": torch.einsum("bihm,bhid->bhmd", alpha, v)}

    def read(self, q, memory: Memory):
        return attend(q, memory["k"], memory["v"])
