"""fla's GSA, gated slot attention (fla/layers/gsa.py GatedSlotAttention; recurrence of
fla/ops/gsa/naive.py naive_recurrent_gsa and fla/ops/gsa/fused_recurrent.py), per kv head with
dk = head_k_dim, dv = head_v_dim, M slots, scale 1 (the layer's default, not dk^−1/2):

  q, k      = feature_map(q/k projections (+ short conv + silu))    swish | relu | t2r
  v         = silu(v projection (+ short conv + silu))
  g         = logsigmoid(f_proj(x)) / gate_logit_normalizer          per slot, ≤ 0
  s         = 1 − exp(g)
  H_k       = H_k · diag(exp(g)) + k sᵀ          [dk, M]
  H_v       = diag(exp(g)) H_v + s vᵀ            [M, dv]
  o         = softmax(qᵀ H_k) H_v                 per query head, from its group's kv head
  out       = o_proj(rms_norm(silu(concat_h o), eps 1e-5) · g_norm)

Query head h reads kv head h // (num_heads / num_kv_heads) (einops '(h g)' in the layer). The
output norm runs over all heads together with eps fixed at 1e-5: the layer calls
fla/modules/layernorm.py rms_norm_linear without passing g_norm.eps.

State per kv head: H_k [dk, M] and H_v [M, dv] (plus the conv windows); all zeros is empty.
"""

from __future__ import annotations

from typing import Dict, Tuple

import torch

from .config import GSA_OUTPUT_NORM_EPS, FlaConfig
from .ops import gsa_feature_map, gsa_gates, rms_norm, silu
from .qkv import new_conv_state, project_qkv


def new_gsa_state(cfg: FlaConfig) -> Dict[str, torch.Tensor]:
    hkv, m = cfg.num_kv_heads, cfg.num_slots
    state = {"h_k": torch.zeros(hkv, cfg.head_k_dim, m, dtype=torch.float64),
             "h_v": torch.zeros(hkv, m, cfg.head_v_dim, dtype=torch.float64)}
    state.update(new_conv_state(cfg))
    return state


def _inputs(w, prefix, cfg: FlaConfig, x, state, one_token):
    q, k, v, conv = project_qkv(w, prefix, cfg, x, state, one_token)
    t, hkv = x.shape[0], cfg.num_kv_heads
    t2r = w.get(f"{prefix}.feature_map.layer.weight")
    q = gsa_feature_map(q.view(t, cfg.num_heads, cfg.head_k_dim), cfg.feature_map, t2r)
    k = gsa_feature_map(k.view(t, hkv, cfg.head_k_dim), cfg.feature_map, t2r)
    v = silu(v.view(t, hkv, cfg.head_v_dim))
    f = (x @ w[f"{prefix}.f_proj.weight"].T).view(t, hkv, cfg.num_slots)
    log_decay, write = gsa_gates(f, cfg.gate_logit_normalizer)
    return q, k, v, log_decay, write, conv


def _per_query_head(cfg: FlaConfig, kv: torch.Tensor, head_axis: int) -> torch.Tensor:
    return kv.repeat_interleave(cfg.num_kv_groups, dim=head_axis)


def _output(w, prefix, cfg: FlaConfig, o):
    """o [T, H, dv] -> [T, E]."""
    o = silu(o.reshape(o.shape[0], cfg.value_dim))
    o = rms_norm(o, w.get(f"{prefix}.g_norm.weight"), GSA_OUTPUT_NORM_EPS)
    return o @ w[f"{prefix}.o_proj.weight"].T


def gsa_step(w: Dict[str, torch.Tensor], prefix: str, cfg: FlaConfig, x: torch.Tensor,
             state: Dict[str, torch.Tensor], position: int) -> Tuple[torch.Tensor, Dict]:
    """One token, x [E]: the two-pass recurrence, one update each."""
    del position  # GSA has no positional input
    q, k, v, log_decay, write, conv = _inputs(w, prefix, cfg, x[None, :], state, True)
    q, k, v, decay, write = q[0], k[0], v[0], torch.exp(log_decay[0]), write[0]
    h_k = state["h_k"] * decay[:, None, :] + k[:, :, None] * write[:, None, :]
    h_v = state["h_v"] * decay[:, :, None] + write[:, :, None] * v[:, None, :]
    scores = torch.einsum("hd,hdm->hm", q, _per_query_head(cfg, h_k, 0))
    o = torch.einsum("hm,hmd->hd", torch.softmax(scores, dim=-1), _per_query_head(cfg, h_v, 0))
    return _output(w, prefix, cfg, o[None])[0], dict(conv, h_k=h_k, h_v=h_v)


def gsa_chunk(w: Dict[str, torch.Tensor], prefix: str, cfg: FlaConfig, x: torch.Tensor,
              state: Dict[str, torch.Tensor], start: int) -> Tuple[torch.Tensor, Dict]:
    """A chunk x [T, E] all at once: with G_t the cumulative log decay, token j's write reaches
    step t ≥ j scaled by exp(G_t − G_j) and the carried state by exp(G_t)."""
    del start
    t = x.shape[0]
    q, k, v, log_decay, write, conv = _inputs(w, prefix, cfg, x, state, False)
    cum = torch.cumsum(log_decay, dim=0)                                    # [T, Hkv, M]
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    gap = cum[:, None] - cum[None, :]                                       # [t, j, Hkv, M]
    reach = torch.where(causal[:, :, None, None], torch.exp(torch.where(
        causal[:, :, None, None], gap, torch.zeros_like(gap))), torch.zeros_like(gap))
    reach = reach * write[None]                                             # · s_j
    carry = torch.exp(cum)                                                  # [T, Hkv, M]
    # Expand kv heads to query heads, then: scores[t,h,m] = carried part + in-chunk part.
    reach_q, carry_q = _per_query_head(cfg, reach, 2), _per_query_head(cfg, carry, 1)
    k_q, v_q = _per_query_head(cfg, k, 1), _per_query_head(cfg, v, 1)
    h_k0, h_v0 = _per_query_head(cfg, state["h_k"], 0), _per_query_head(cfg, state["h_v"], 0)
    scores = (carry_q * torch.einsum("thd,hdm->thm", q, h_k0) +
              torch.einsum("tjhm,thd,jhd->thm", reach_q, q, k_q))
    p = torch.softmax(scores, dim=-1)
    o = (torch.einsum("thm,thm,hmd->thd", p, carry_q, h_v0) +
         torch.einsum("thm,tjhm,jhd->thd", p, reach_q, v_q))
    last = reach[-1]                                                        # [j, Hkv, M]
    h_k = carry[-1][:, None, :] * state["h_k"] + torch.einsum("jhm,jhd->hdm", last, k)
    h_v = carry[-1][:, :, None] * state["h_v"] + torch.einsum("jhm,jhd->hmd", last, v)
    return _output(w, prefix, cfg, o), dict(conv, h_k=h_k, h_v=h_v)
