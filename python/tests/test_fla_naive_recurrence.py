"""Our fla mixers against fla's own two-pass formulation, re-derived here (issue 20).

fla states ABC and GSA in fla/ops/{abc,gsa}/naive.py as two passes over time: keys into a
[dk, M] state whose readout is softmax-ed over slots, then values out of an [M, dv] state. fla
itself cannot run here (it imports triton and einops), and we may not copy it, so this test
writes that formulation independently from the description in docs/FLA_CHECKPOINTS.md — ABC
normalised through logcumsumexp (the slot weights of step t are exp(s_j − z_t) with z the
running log-sum-exp, the state decayed by exp(z_{t−1} − z_t)) and GSA with its forget gate —
with explicit loops over heads, and compares with the reference's step and chunk forms, which
use a running max (ABC) and matrix forms instead."""

import math
import unittest

import torch

from fla_small import small_config
from slotserve_ref.fla.abc_mixer import abc_chunk, abc_step, new_abc_state
from slotserve_ref.fla.gsa_mixer import gsa_chunk, gsa_step, new_gsa_state
from slotserve_ref.fla.random_weights import random_tensors

PREFIX = "model.layers.0.attn"
T = 13


def silu(x):
    return x / (1 + torch.exp(-x))


def rms(x, weight, eps):
    out = x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)
    return out if weight is None else out * weight


def naive_abc(w, cfg, x):
    """Layer output [T, E] of fla's ABC layer (no conv, no RoPE) via the two-pass form."""
    h, dk, dv, m = cfg.num_heads, cfg.head_k_dim, cfg.head_v_dim, cfg.num_slots
    q = (x @ w[f"{PREFIX}.q_proj.weight"].T).view(T, h, dk)
    k = (x @ w[f"{PREFIX}.k_proj.weight"].T).view(T, h, dk)
    v = (x @ w[f"{PREFIX}.v_proj.weight"].T).view(T, h, dv)
    s = (x @ w[f"{PREFIX}.s_proj.weight"].T).view(T, h, m)
    s = torch.minimum(torch.maximum(s, torch.full_like(s, cfg.clamp_min)),
                      torch.full_like(s, cfg.clamp_max))
    out = torch.zeros(T, h, dv, dtype=torch.float64)
    for head in range(h):
        z = torch.logcumsumexp(s[:, head], dim=0)                       # [T, M]
        hk = torch.zeros(dk, m, dtype=torch.float64)
        scores = []
        for t in range(T):
            decay = torch.exp(z[t - 1] - z[t]) if t else torch.ones(m, dtype=torch.float64)
            hk = hk * decay[None, :] + torch.outer(k[t, head], torch.exp(s[t, head] - z[t]))
            scores.append((q[t, head] / math.sqrt(dk)) @ hk)
        probs = torch.softmax(torch.stack(scores), dim=-1)              # [T, M]
        hv = torch.zeros(m, dv, dtype=torch.float64)
        for t in range(T):
            decay = torch.exp(z[t - 1] - z[t]) if t else torch.ones(m, dtype=torch.float64)
            hv = hv * decay[:, None] + torch.outer(torch.exp(s[t, head] - z[t]), v[t, head])
            out[t, head] = probs[t] @ hv
    g = (x @ w[f"{PREFIX}.g_proj.weight"].T).view(T, h, dv)
    o = rms(out, w.get(f"{PREFIX}.g_norm.weight"), cfg.norm_eps) * silu(g)
    return o.reshape(T, -1) @ w[f"{PREFIX}.o_proj.weight"].T


def naive_gsa(w, cfg, x):
    """Layer output [T, E] of fla's GSA layer (no conv) via the two-pass form."""
    h, hkv, dk, dv, m = cfg.num_heads, cfg.num_kv_heads, cfg.head_k_dim, cfg.head_v_dim, cfg.num_slots
    fmap = {"swish": silu, "relu": torch.relu}[cfg.feature_map]
    q = fmap((x @ w[f"{PREFIX}.q_proj.weight"].T).view(T, h, dk))
    k = fmap((x @ w[f"{PREFIX}.k_proj.weight"].T).view(T, hkv, dk))
    v = silu((x @ w[f"{PREFIX}.v_proj.weight"].T).view(T, hkv, dv))
    f = (x @ w[f"{PREFIX}.f_proj.weight"].T).view(T, hkv, m)
    log_forget = -torch.log1p(torch.exp(-f)) / cfg.gate_logit_normalizer   # logsigmoid(f)/n
    write = 1 - torch.exp(log_forget)
    out = torch.zeros(T, h, dv, dtype=torch.float64)
    for head in range(h):
        kv = head * hkv // h             # query heads are grouped consecutively
        hk = torch.zeros(dk, m, dtype=torch.float64)
        hv = torch.zeros(m, dv, dtype=torch.float64)
        for t in range(T):
            keep = torch.exp(log_forget[t, kv])
            hk = hk * keep[None, :] + torch.outer(k[t, kv], write[t, kv])
            hv = hv * keep[:, None] + torch.outer(write[t, kv], v[t, kv])
            out[t, head] = torch.softmax(q[t, head] @ hk, dim=-1) @ hv   # scale 1
    o = rms(silu(out.reshape(T, -1)), w.get(f"{PREFIX}.g_norm.weight"), 1e-5)
    return o @ w[f"{PREFIX}.o_proj.weight"].T


def layer_input(cfg, seed):
    return torch.randn(T, cfg.hidden_size, dtype=torch.float64,
                       generator=torch.Generator().manual_seed(seed))


def ours(step, chunk, new_state, w, cfg, x):
    state, rows = new_state(cfg), []
    for t in range(T):
        out, state = step(w, PREFIX, cfg, x[t], state, t)
        rows.append(out)
    whole, _ = chunk(w, PREFIX, cfg, x, new_state(cfg), 0)
    return torch.stack(rows), whole


class NaiveRecurrenceTest(unittest.TestCase):
    def check(self, naive, mixer, cfg, seed):
        w = random_tensors(cfg, seed)
        x = layer_input(cfg, seed)
        want = naive(w, cfg, x)
        stepped, whole = ours(*mixer, w, cfg, x)
        self.assertLess((stepped - want).abs().max().item(), 1e-10)
        self.assertLess((whole - want).abs().max().item(), 1e-10)
        self.assertGreater(want.abs().max().item(), 1e-2)

    def test_abc(self):
        for clamp in ((-32.0, 32.0), (-0.3, 0.4)):
            cfg = small_config("abc_rope_clamp", use_rope=False, clamp_min=clamp[0],
                               clamp_max=clamp[1], num_slots=5)
            self.check(naive_abc, (abc_step, abc_chunk, new_abc_state), cfg, seed=11)

    def test_abc_large_slot_logits_do_not_overflow(self):
        """Slot logits in the hundreds: exp() would overflow without the running max."""
        cfg = small_config("abc_rope_clamp", use_rope=False, clamp_min=-400.0, clamp_max=400.0)
        w = random_tensors(cfg, 12)
        w[f"{PREFIX}.s_proj.weight"] = w[f"{PREFIX}.s_proj.weight"] * 300
        x = layer_input(cfg, 12)
        stepped, whole = ours(abc_step, abc_chunk, new_abc_state, w, cfg, x)
        self.assertTrue(torch.isfinite(stepped).all())
        self.assertLess((stepped - naive_abc(w, cfg, x)).abs().max().item(), 1e-9)
        self.assertLess((whole - stepped).abs().max().item(), 1e-9)

    def test_gsa(self):
        for name, changes in (("gsa_swish", {}), ("gsa_relu_conv_gqa", {"use_short_conv": False}),
                              ("gsa_swish", {"num_heads": 4, "num_kv_heads": 1,
                                             "elementwise_affine": False})):
            with self.subTest(name=name, **changes):
                cfg = small_config(name, **changes)
                self.check(naive_gsa, (gsa_step, gsa_chunk, new_gsa_state), cfg, seed=13)


if __name__ == "__main__":
    unittest.main()
