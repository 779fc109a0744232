"""softmax cross attention (docs/ARCHITECTURE.md "Encoder–decoder models"): the memory is the
projected source itself, K and V
(k rows per head), so it grows with the source — the baseline the bounded kinds are measured
against."""

from .cross_attention_base import CrossAttention, Memory, attend
from .seq2seq_config import Seq2seqConfig


class SoftmaxCrossAttention(CrossAttention):
    def __init__(self, cfg: Seq2seqConfig):
        super().__init__(cfg.d_model, cfg.n_heads)

    def build_memory(self, source) -> Memory:
        k, v = self.project_source(source)
        return {"k": k, "v": v}

    def read(self, q, memory: Memory):
        return attend(q, memory["k"], memory["v"])
