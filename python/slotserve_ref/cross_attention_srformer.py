"""SRformer cross attention (docs/ARCHITECTURE.md "Encoder–decoder models"; the segmented recurrent
transformer's Algorithm 1).

The source's k positions are cut into m = ceil(k/s) segments of s positions. Decoder position
t (from 0) attends with softmax only to its segment i = min(floor(t m / q), m-1), q being the
configured target_length, and adds what the other segments hold through the recurrent
attention function (RAF), a leaky integrate-and-fire memory updated whenever the segment
changes (always at t = 0):

  P   = KV - K_Si^T V_Si        KV = K^T V (d x d, once per request)
  x   = cross.raf_proj(P)       (row-wise Linear d -> d)
  mem = leak mem + x;  y = mem/thre - 1;  mem = mem - thre [y > 0];  R = relu(y)
  out = softmax(K_Si q / sqrt(d))^T V_Si + q^T R / max(|K|_F, 1e-6)

The cross memory is K and V (with KV and |K|_F derived from them); the per-request state is
mem, R and the segment of the previous step (-1 before the first), all explicit.
"""

import math

import torch
from torch import nn

from .cross_attention_base import CrossAttention, CrossState, Memory
from .heads import merge_heads
from .seq2seq_config import Seq2seqConfig

NORM_FLOOR = 1e-6


def segment_count(source_length: int, segment: int) -> int:
    return -(-source_length // segment)


def segment_index(positions: torch.Tensor, count: int, target_length: int) -> torch.Tensor:
    """i = min(floor(t m / q), m - 1) for decoder positions t."""
    return torch.clamp_max(positions * count // target_length, count - 1)


class SrformerCrossAttention(CrossAttention):
    def __init__(self, cfg: Seq2seqConfig):
        super().__init__(cfg.d_model, cfg.n_heads)
        cross = cfg.cross_attention
        self.segment = cross.segment
        self.target_length = cross.target_length
        d = cfg.head_dim
        self.raf_proj = nn.Linear(d, d)
        self.raf_leak = nn.Parameter(torch.empty(1))
        self.raf_thre = nn.Parameter(torch.empty(1))

    def build_memory(self, source) -> Memory:
        k, v = self.project_source(source)                    # [B, H, k, d]
        return {"k": k, "v": v, "kv": k.transpose(-1, -2) @ v,
                "k_norm": torch.linalg.matrix_norm(k)}        # Frobenius, [B, H]

    def segments_of(self, positions: torch.Tensor, memory: Memory) -> torch.Tensor:
        count = segment_count(memory["k"].shape[2], self.segment)
        return segment_index(positions, count, self.target_length)

    def in_segment(self, segments: torch.Tensor, memory: Memory) -> torch.Tensor:
        """[..., k] boolean: source position j lies in the given segment."""
        j = torch.arange(memory["k"].shape[2], device=segments.device)
        return (j // self.segment) == segments.unsqueeze(-1)

    def raf_update(self, mem: torch.Tensor, segments: torch.Tensor, memory: Memory):
        """One RAF update of mem [B, H, d, d] on entering `segments` [B] -> (mem, R)."""
        mask = self.in_segment(segments, memory).to(memory["k"].dtype)   # [B, k]
        k_seg = memory["k"] * mask[:, None, :, None]
        p = memory["kv"] - k_seg.transpose(-1, -2) @ memory["v"]
        mem = self.raf_leak * mem + self.raf_proj(p)
        y = mem / self.raf_thre - 1.0
        mem = mem - self.raf_thre * (y > 0).to(mem.dtype)
        return mem, torch.relu(y)

    def segment_read(self, q: torch.Tensor, r: torch.Tensor, visible: torch.Tensor,
                     memory: Memory) -> torch.Tensor:
        """q [B, T, H, d], R [B, T, H, d, d], visible [B, T, k] -> out [B, T, H, d]."""
        scores = torch.einsum("bthd,bhjd->bthj", q, memory["k"]) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(~visible[:, :, None, :], float("-inf"))
        o_s = torch.einsum("bthj,bhjd->bthd", torch.softmax(scores, dim=-1), memory["v"])
        recurrent = torch.einsum("bthd,bthde->bthe", q, r)
        return o_s + recurrent / memory["k_norm"].clamp_min(NORM_FLOOR)[:, None, :, None]

    def forward(self, x: torch.Tensor, memory: Memory) -> torch.Tensor:
        """Parallel form over target positions 0..T-1: the segment schedule depends on t only,
        so R is computed once per segment change and broadcast to the positions that use it."""
        batch, length = x.shape[:2]
        segments = self.segments_of(torch.arange(length, device=x.device), memory)   # [T]
        state = self.new_state(batch, x.dtype, x.device)
        mem, r, rs = state["mem"], state["r"], []
        for t in range(length):
            if t == 0 or segments[t] != segments[t - 1]:
                mem, r = self.raf_update(mem, segments[t].expand(batch), memory)
            rs.append(r)
        visible = self.in_segment(segments, memory).expand(batch, -1, -1)
        out = self.segment_read(self.query(x), torch.stack(rs, dim=1), visible, memory)
        return self.o_proj(merge_heads(out))

    def new_state(self, batch: int, dtype: torch.dtype, device=None) -> CrossState:
        h, d = self.n_heads, self.head_dim
        return {"mem": torch.zeros(batch, h, d, d, dtype=dtype, device=device),
                "r": torch.zeros(batch, h, d, d, dtype=dtype, device=device),
                "segment": torch.full((batch,), -1, dtype=torch.long, device=device)}

    def step(self, x: torch.Tensor, memory: Memory, state: CrossState,
             positions: torch.Tensor):
        """Recurrent form: x [B, E], positions [B]; mem and R change only for the rows whose
        segment differs from their previous step's."""
        segments = self.segments_of(positions, memory)                        # [B]
        changed = (segments != state["segment"])[:, None, None, None]
        new_mem, new_r = self.raf_update(state["mem"], segments, memory)
        mem = torch.where(changed, new_mem, state["mem"])
        r = torch.where(changed, new_r, state["r"])
        visible = self.in_segment(segments, memory)[:, None, :]              # [B, 1, k]
        out = self.segment_read(self.query(x).unsqueeze(1), r.unsqueeze(1), visible, memory)
        return self.o_proj(merge_heads(out[:, 0])), {"mem": mem, "r": r, "segment": segments}
