"""A faster training form of ABC attention, algebraically equal to AbcAttention.forward
(slotserve_ref/attention_abc.py), which builds a [B, H, M, T, T] weight tensor and the slot
averages of every prefix [B, T, H, M, d] and so costs O(T^2 M d) per head.

Here the sequence is processed in chunks of C tokens carrying the recurrent state (K~, V~, z and
a stabilising max r) from chunk to chunk, and inside a chunk the slot averages are never
materialised: with e[m, j] = exp(s_j[m] - r) (r = the max slot logit seen so far, detached: the
result does not depend on it) and the causal mask [t, j],

  q_t . K~_t[m] = carry[m] q_t . K~_prev[m] + sum_j mask[t, j] (q_t . k_j) e[m, j]
  out_t         = sum_m u_t[m] carry[m] V~_prev[m] + sum_j mask[t, j] (sum_m u_t[m] e[m, j]) v_j

with u_t = softmax(scores_t) / z_t, so every term is a small matrix product. Cost per token and
head is O(C (d + M) + M d). Used by train.py only; checked against the reference form in
tests (tests/python/test_abc_chunked.py).
"""

from __future__ import annotations

import math

import torch


def abc_chunked_forward(attn, x: torch.Tensor, chunk: int = 64) -> torch.Tensor:
    """attn: an AbcAttention module; x [B, T, E] -> [B, T, E], equal to attn.forward(x)."""
    q, k, v, s = attn._project(x)  # q, k, v [B, T, H, d]; s [B, T, H, M]
    q = q.transpose(1, 2) / math.sqrt(attn.head_dim)  # [B, H, T, d]
    k = k.transpose(1, 2)
    v = v.transpose(1, 2)
    s = s.permute(0, 2, 3, 1)  # [B, H, M, T]
    batch, heads, slots, length = s.shape
    k_tilde = q.new_zeros(batch, heads, slots, attn.head_dim)
    v_tilde = torch.zeros_like(k_tilde)
    z = q.new_zeros(batch, heads, slots)
    r = q.new_full((batch, heads, slots), float("-inf"))
    outputs = []
    for start in range(0, length, chunk):
        end = min(start + chunk, length)
        qc, kc, vc, sc = q[:, :, start:end], k[:, :, start:end], v[:, :, start:end], s[..., start:end]
        mask = torch.ones(end - start, end - start, dtype=torch.bool, device=x.device).tril()
        r_new = torch.maximum(r, sc.amax(dim=-1)).detach()
        carry = torch.exp(r - r_new)  # [B, H, M]; 0 before the first chunk
        e = torch.exp(sc - r_new.unsqueeze(-1))  # [B, H, M, C]
        # z_t[m] for every t of the chunk, as [B, H, C, M]
        z_t = (carry * z).unsqueeze(-2) + torch.cumsum(e, dim=-1).transpose(-1, -2)
        z_t = z_t.clamp_min(1e-30)  # only an all-underflowed slot could reach 0
        qk = (qc @ kc.transpose(-1, -2)).masked_fill(~mask, 0.0)  # [B, H, C, C]
        score_num = carry.unsqueeze(-2) * (qc @ k_tilde.transpose(-1, -2)) + qk @ e.transpose(-1, -2)
        u = torch.softmax(score_num / z_t, dim=-1) / z_t  # [B, H, C, M]
        mix = (u @ e).masked_fill(~mask, 0.0)  # [B, H, C, C]
        outputs.append((u * carry.unsqueeze(-2)) @ v_tilde + mix @ vc)  # [B, H, C, d]
        k_tilde = carry.unsqueeze(-1) * k_tilde + e @ kc
        v_tilde = carry.unsqueeze(-1) * v_tilde + e @ vc
        z = carry * z + e.sum(dim=-1)
        r = r_new
    out = torch.cat(outputs, dim=2).transpose(1, 2)  # [B, T, H, d]
    return attn.o_proj(out.reshape(batch, length, heads * attn.head_dim))


def use_chunked_abc(model, chunk: int = 64) -> int:
    """Routes every AbcAttention of `model` through abc_chunked_forward; returns how many."""
    count = 0
    for module in model.modules():
        if type(module).__name__ == "AbcAttention":
            module.forward = lambda x, attn=module: abc_chunked_forward(attn, x, chunk)
            count += 1
    return count
