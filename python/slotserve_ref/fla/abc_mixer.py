"""fla's ABC attention (fla/layers/abc.py ABCAttention as ABCBlock builds it: use_input_gate
false, use_output_gate and use_norm true), per head with dk = head_k_dim, dv = head_v_dim:

  q, k, v   = q/k/v projections (+ short conv + silu), rotated by RoPE when use_rope
  s         = clamp(s_proj(x), clamp_min, clamp_max)               per head: M slot logits
  K̄_t[m]    = Σ_{j≤t} exp(s_j[m]) k_j / Σ_{j≤t} exp(s_j[m])        (likewise V̄ with v)
  o_t       = softmax(K̄_t q_t / sqrt(dk)) V̄_t
  out       = o_proj(concat_h rms_norm(o_t)·g_norm · silu(g_proj(x)))

fla computes the two passes with fla/ops/abc/chunk.py chunk_abc (naive form:
fla/ops/abc/naive.py naive_recurrent_abc, whose g = z_{t−1} − z_t, z = logcumsumexp(s), keeps
hk = K̄ᵀ and hv = V̄ normalised). Its cache keeps only hk/hv, not the normaliser z, so fla's own
cached decoding restarts the weights at every call; we keep z (as the ABC of docs/MODEL_FORMAT.md
"The attention kinds" does) so that
step-by-step equals the whole-sequence forward fla was trained with.

State per head: K̃ [M, dk], Ṽ [M, dv], z [M], m [M]: K̄ = K̃/z, V̄ = Ṽ/z, and m + log z is the
log of the slot's total weight (m a running max, so nothing overflows). All zeros is empty.
"""

from __future__ import annotations

from typing import Dict, Tuple

import torch

from .config import FlaConfig
from .ops import gated_rms_norm, rotary, softmax_scale
from .qkv import new_conv_state, project_qkv


def new_abc_state(cfg: FlaConfig) -> Dict[str, torch.Tensor]:
    h, m = cfg.num_heads, cfg.num_slots
    zeros = lambda *shape: torch.zeros(*shape, dtype=torch.float64)
    state = {"k_tilde": zeros(h, m, cfg.head_k_dim), "v_tilde": zeros(h, m, cfg.head_v_dim),
             "z": zeros(h, m), "m": zeros(h, m)}
    state.update(new_conv_state(cfg))
    return state


def _inputs(w, prefix, cfg: FlaConfig, x, state, positions, one_token):
    q, k, v, conv = project_qkv(w, prefix, cfg, x, state, one_token)
    t, h = x.shape[0], cfg.num_heads
    q, k = q.view(t, h, cfg.head_k_dim), k.view(t, h, cfg.head_k_dim)
    v = v.view(t, h, cfg.head_v_dim)
    if cfg.use_rope:
        q, k = rotary(q, positions), rotary(k, positions)
    s = (x @ w[f"{prefix}.s_proj.weight"].T).view(t, h, cfg.num_slots)
    if cfg.clamp_min is not None or cfg.clamp_max is not None:
        s = s.clamp(cfg.clamp_min, cfg.clamp_max)
    return q, k, v, s, conv


def _output(w, prefix, cfg: FlaConfig, x, o):
    """o [T, H, dv] -> the layer's output [T, E] through the gated per-head norm and o_proj."""
    t = x.shape[0]
    g = (x @ w[f"{prefix}.g_proj.weight"].T).view(t, cfg.num_heads, cfg.head_v_dim)
    o = gated_rms_norm(o, g, w.get(f"{prefix}.g_norm.weight"), cfg.norm_eps)
    return o.reshape(t, cfg.value_dim) @ w[f"{prefix}.o_proj.weight"].T


def _read(cfg: FlaConfig, q, k_bar, v_bar):
    """q [..., H, dk], K̄ [..., H, M, dk], V̄ [..., H, M, dv] -> [..., H, dv]."""
    scores = torch.einsum("...hmd,...hd->...hm", k_bar, q) * softmax_scale(cfg.head_k_dim)
    return torch.einsum("...hm,...hmd->...hd", torch.softmax(scores, dim=-1), v_bar)


def abc_step(w: Dict[str, torch.Tensor], prefix: str, cfg: FlaConfig, x: torch.Tensor,
             state: Dict[str, torch.Tensor], position: int) -> Tuple[torch.Tensor, Dict]:
    """One token, x [E]: the running-max recurrence of the ABC of docs/MODEL_FORMAT.md "The
    attention kinds"."""
    q, k, v, s, conv = _inputs(w, prefix, cfg, x[None, :], state, torch.tensor([position]), True)
    q, k, v, s = q[0], k[0], v[0], s[0]
    z = state["z"]
    m_old = torch.where(z > 0, state["m"], torch.full_like(z, float("-inf")))
    m_new = torch.maximum(m_old, s)
    carry, weight = torch.exp(m_old - m_new), torch.exp(s - m_new)  # carry is 0 for empty slots
    z = carry * z + weight
    k_tilde = carry[..., None] * state["k_tilde"] + weight[..., None] * k[:, None, :]
    v_tilde = carry[..., None] * state["v_tilde"] + weight[..., None] * v[:, None, :]
    o = _read(cfg, q, k_tilde / z[..., None], v_tilde / z[..., None])
    new_state = dict(conv, k_tilde=k_tilde, v_tilde=v_tilde, z=z, m=m_new)
    return _output(w, prefix, cfg, x[None, :], o[None])[0], new_state


def abc_chunk(w: Dict[str, torch.Tensor], prefix: str, cfg: FlaConfig, x: torch.Tensor,
              state: Dict[str, torch.Tensor], start: int) -> Tuple[torch.Tensor, Dict]:
    """A chunk x [T, E] at positions start…start+T−1, all at once: every prefix's slot
    averages are a masked softmax over time, with the carried slots entering as one more
    "token" of log weight m + log z (not a recurrence, so it checks abc_step)."""
    t = x.shape[0]
    q, k, v, s, conv = _inputs(w, prefix, cfg, x, state, torch.arange(start, start + t), False)
    z = state["z"]
    filled = z > 0
    safe_z = torch.where(filled, z, torch.ones_like(z))[..., None]
    log_mass = torch.where(filled, state["m"] + torch.log(torch.where(filled, z, torch.ones_like(z))),
                           torch.full_like(z, float("-inf")))                       # [H, M]
    k_prev, v_prev = state["k_tilde"] / safe_z, state["v_tilde"] / safe_z
    # total[t] = log(carried weight + Σ_{j≤t} exp(s_j)), per head and slot
    total = torch.logcumsumexp(torch.cat([log_mass[None], s], dim=0), dim=0)[1:]   # [T, H, M]
    causal = torch.ones(t, t, dtype=torch.bool).tril()                              # [t, j]
    logits = s[None, :, :, :] - total[:, None, :, :]                                # [t, j, H, M]
    weights = torch.where(causal[:, :, None, None], torch.exp(logits), torch.zeros_like(logits))
    carried = torch.exp(log_mass[None] - total)                                     # [T, H, M]
    k_bar = carried[..., None] * k_prev[None] + torch.einsum("tjhm,jhd->thmd", weights, k)
    v_bar = carried[..., None] * v_prev[None] + torch.einsum("tjhm,jhd->thmd", weights, v)
    o = _read(cfg, q, k_bar, v_bar)
    # The state after the chunk in the step form's terms: m = log total weight, z = 1.
    new_state = dict(conv, k_tilde=k_bar[-1], v_tilde=v_bar[-1], z=torch.ones_like(z),
                     m=total[-1])
    return _output(w, prefix, cfg, x, o), new_state
