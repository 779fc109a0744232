"""Each attention kind's recurrent form against a plain, loop-by-loop transcription of the
docs/MODEL_FORMAT.md "The attention kinds" formulas (no running max, no vectorisation), plus the
properties the C++ side relies
on: ABC's overflow-free scaling, RFA's feature layouts and denominator floor, Luna's t."""

import math
import unittest

import torch

from slotserve_ref.attention_luna import elu_plus_one, softplus_ln2
from slotserve_ref.heads import split_heads
from slotserve_ref.positions import sinusoidal_positions
from small_models import small_model

T = 9


def attention_of(variant: str, seed: int = 0, dtype=torch.float64):
    return small_model(variant, seed=seed, dtype=dtype).layers[0].attn


def attention_inputs(attn, seed: int, dtype=torch.float64) -> torch.Tensor:
    e = attn.q_proj.in_features
    return torch.randn(1, T, e, generator=torch.Generator().manual_seed(seed),
                       dtype=torch.float64).to(dtype)


@torch.no_grad()
def run_recurrent(attn, x: torch.Tensor):
    """Feeds x [1, T, E] through attn.step token by token; returns (outputs [T, E], states)."""
    state = attn.new_state(1, x.dtype)
    outs, states = [], []
    for t in range(x.shape[1]):
        out, state = attn.step(x[:, t], state, torch.tensor([t]))
        outs.append(out[0])
        states.append(state)
    return torch.stack(outs), states


def assert_recurrent_matches_naive(test, variants, naive, seed):
    """For each variant: the module's recurrent form equals naive(attn, x) to 1e-12."""
    for variant in variants:
        with test.subTest(variant=variant):
            attn = attention_of(variant, seed=seed)
            x = attention_inputs(attn, seed=seed + 1)
            recurrent, _ = run_recurrent(attn, x)
            torch.testing.assert_close(recurrent, naive(attn, x), rtol=0, atol=1e-12)


def heads(attn, linear, x):
    return split_heads(linear(x), attn.n_heads)[0]  # [T, H, d]


class AbcTest(unittest.TestCase):
    @torch.no_grad()
    def naive(self, attn, x):
        """Un-normalised eq. 7: z = Σ exp(s_j), K~ = Σ exp(s_j) k_j, in float64."""
        q, k, v = heads(attn, attn.q_proj, x), heads(attn, attn.k_proj, x), heads(attn, attn.v_proj, x)
        s = heads(attn, attn.slot_proj, x)  # [T, H, M]
        h_count, d, m_count = attn.n_heads, attn.head_dim, attn.slots
        out = torch.zeros(x.shape[1], h_count * d, dtype=torch.float64)
        for t in range(x.shape[1]):
            for h in range(h_count):
                weights = torch.exp(s[: t + 1, h, :])  # [t+1, M]
                z = weights.sum(0)
                k_bar = (weights.t() @ k[: t + 1, h]) / z[:, None]
                v_bar = (weights.t() @ v[: t + 1, h]) / z[:, None]
                scores = torch.tensor([sum(k_bar[m, i] * q[t, h, i] for i in range(d))
                                       for m in range(m_count)]) / math.sqrt(d)
                out[t, h * d:(h + 1) * d] = torch.softmax(scores, 0) @ v_bar
        return attn.o_proj(out)

    def test_running_max_matches_unnormalised_formula(self):
        assert_recurrent_matches_naive(self, ("abc",), self.naive, seed=1)

    @torch.no_grad()
    def test_large_slot_logits_do_not_overflow_in_float32(self):
        # Slot logits around ±150: exp() overflows float32 (max ~exp(88)), so only the
        # running-max scaling keeps the float32 recurrence finite.
        attn64 = attention_of("abc", seed=3)
        attn64.slot_proj.weight.mul_(150.0)
        x = attention_inputs(attn64, seed=4)
        s = attn64.slot_proj(x)
        self.assertGreater(s.abs().max().item(), 100.0)
        expected = self.naive(attn64, x)
        attn32 = attention_of("abc", seed=3, dtype=torch.float32)
        attn32.load_state_dict({k: v.float() for k, v in attn64.state_dict().items()})
        recurrent32, states = run_recurrent(attn32, x.float())
        self.assertTrue(torch.isfinite(recurrent32).all())
        torch.testing.assert_close(recurrent32.double(), expected, rtol=0, atol=2e-4)
        # The stored state: m = running max of the slot logits, z = Σ exp(s_j - m).
        s_heads = split_heads(s, attn64.n_heads)[0]  # [T, H, M]
        last = states[-1]
        torch.testing.assert_close(last["m"][0].double(), s_heads.max(0).values,
                                   rtol=1e-6, atol=0)
        torch.testing.assert_close(last["z"][0].double(),
                                   torch.exp(s_heads - s_heads.max(0).values).sum(0),
                                   rtol=1e-5, atol=1e-5)

    def test_zero_state_is_empty(self):
        # The C++ arena resets a slot with memset(0); the first token must then see only itself,
        # whatever m's stale zero says (slot logits far below 0 would otherwise underflow).
        attn = attention_of("abc", seed=5)
        with torch.no_grad():
            attn.slot_proj.bias.fill_(-800.0)
        x = attention_inputs(attn, seed=6)
        out, state = attn.step(x[:, 0], attn.new_state(1, torch.float64), torch.tensor([0]))
        self.assertTrue(torch.isfinite(out).all())
        torch.testing.assert_close(state["z"], torch.ones_like(state["z"]))
        # every slot holds exactly v_0, so the output is o_proj(v_0)
        torch.testing.assert_close(out, attn.o_proj(attn.v_proj(x[:, 0])), rtol=0, atol=1e-12)


class RfaTest(unittest.TestCase):
    @torch.no_grad()
    def naive_phi(self, attn, u, h):
        """phi for one head's vector u [d], written out element by element."""
        d, n_features = attn.head_dim, attn.features
        norm = math.sqrt(sum(float(u[i]) ** 2 for i in range(d)))
        u_hat = [float(u[i]) / (norm + attn.norm_eps) for i in range(d)]
        angles = [sum(float(attn.rfa_random[h, f, i] * attn.rfa_sigma[h, i]) * u_hat[i]
                      for i in range(d)) for f in range(n_features)]
        sines = [math.sin(a) for a in angles]
        cosines = [math.cos(a) for a in angles]
        if attn.interleave:
            features = [val for pair in zip(sines, cosines) for val in pair]
        else:
            features = sines + cosines
        return torch.tensor(features, dtype=torch.float64) * attn.feature_scale

    @torch.no_grad()
    def naive(self, attn, x):
        q, k, v = heads(attn, attn.q_proj, x), heads(attn, attn.k_proj, x), heads(attn, attn.v_proj, x)
        h_count, d = attn.n_heads, attn.head_dim
        out = torch.zeros(x.shape[1], h_count * d, dtype=torch.float64)
        clamped = 0
        for h in range(h_count):
            s = torch.zeros(2 * attn.features, d, dtype=torch.float64)
            z = torch.zeros(2 * attn.features, dtype=torch.float64)
            for t in range(x.shape[1]):
                phi_k = self.naive_phi(attn, k[t, h], h)
                if attn.gate:
                    g = 1.0 / (1.0 + math.exp(-float(attn.gate_proj(x[0, t])[h])))
                    s = g * s + (1 - g) * torch.outer(phi_k, v[t, h])
                    z = g * z + (1 - g) * phi_k
                else:
                    s = s + torch.outer(phi_k, v[t, h])
                    z = z + phi_k
                phi_q = self.naive_phi(attn, q[t, h], h)
                denominator = float(phi_q @ z)
                clamped += denominator < attn.eps
                out[t, h * d:(h + 1) * d] = (phi_q @ s) / max(denominator, attn.eps)
        return attn.o_proj(out), clamped

    def test_matches_formula_every_variant(self):
        assert_recurrent_matches_naive(
            self, ("rfa_concat", "rfa_interleave", "rfa_gate_concat", "rfa_gate_interleave"),
            lambda attn, x: self.naive(attn, x)[0], seed=7)

    def test_denominator_floor(self):
        # A large eps clamps every token: out = phi(q)^T S / eps.
        attn = attention_of("rfa_gate_concat", seed=9)
        attn.eps = 1e3
        x = attention_inputs(attn, seed=10)
        recurrent, _ = run_recurrent(attn, x)
        expected, clamped = self.naive(attn, x)
        self.assertEqual(clamped, T * attn.n_heads)
        torch.testing.assert_close(recurrent, expected, rtol=0, atol=1e-12)

    @torch.no_grad()
    def test_layout_changes_state_order_not_output(self):
        concat = attention_of("rfa_concat", seed=11)
        interleave = attention_of("rfa_interleave", seed=12)
        interleave.load_state_dict(concat.state_dict())
        x = attention_inputs(concat, seed=13)
        out_c, states_c = run_recurrent(concat, x)
        out_i, states_i = run_recurrent(interleave, x)
        torch.testing.assert_close(out_i, out_c, rtol=0, atol=1e-12)
        n = concat.features
        z_c, z_i = states_c[-1]["z"][0], states_i[-1]["z"][0]  # [H, 2D]
        torch.testing.assert_close(z_i[:, 0::2], z_c[:, :n])  # sines
        torch.testing.assert_close(z_i[:, 1::2], z_c[:, n:])  # cosines


class LunaTest(unittest.TestCase):
    @torch.no_grad()
    def naive(self, attn, x):
        d, length = attn.head_dim, attn.length
        q = heads(attn, attn.q_proj, x) / math.sqrt(d)
        k = heads(attn, attn.k_proj, x)
        v = k if attn.tie_kv else heads(attn, attn.v_proj, x)
        pc = heads(attn, attn.pc_proj, x)
        pq = split_heads(attn.pq_proj(attn.luna_p), attn.n_heads) / math.sqrt(d)  # [L, H, d]
        out = torch.zeros(x.shape[1], attn.n_heads * d, dtype=torch.float64)
        for h in range(attn.n_heads):
            a_state = torch.zeros(d, length, dtype=torch.float64)
            c_state = torch.zeros(length, d, dtype=torch.float64)
            for t in range(x.shape[1]):
                p = attn.activation(torch.stack([pc[t, h] @ pq[l, h] for l in range(length)]))
                a_state += torch.outer(k[t, h], p)
                c_state += torch.outer(p, v[t, h])
                count = t + 1
                a = torch.softmax((q[t, h] @ a_state) / count, 0)
                out[t, h * d:(h + 1) * d] = (a @ c_state) / count
        return attn.o_proj(out)

    def test_matches_formula_every_variant(self):
        assert_recurrent_matches_naive(
            self, ("luna_softplus", "luna_softplus_tiekv", "luna_elu1", "luna_elu1_tiekv"),
            self.naive, seed=14)

    def test_tie_kv_has_no_v_proj(self):
        self.assertFalse(hasattr(attention_of("luna_elu1_tiekv"), "v_proj"))
        self.assertTrue(hasattr(attention_of("luna_elu1"), "v_proj"))

    def test_activations(self):
        u = torch.tensor([-3.0, -0.5, 0.0, 0.7, 4.0], dtype=torch.float64)
        beta = math.log(2.0)
        torch.testing.assert_close(softplus_ln2(u), torch.log1p(torch.exp(beta * u)) / beta)
        self.assertAlmostEqual(float(softplus_ln2(torch.tensor(0.0))), 1.0, places=7)
        torch.testing.assert_close(elu_plus_one(u), torch.where(u > 0, u + 1, torch.exp(u)))


class PositionsTest(unittest.TestCase):
    def test_fairseq_layout(self):
        dim, half = 8, 4
        pos = sinusoidal_positions(torch.tensor([0, 5]), dim, torch.float64)
        torch.testing.assert_close(pos[0], torch.tensor([0.0] * half + [1.0] * half,
                                                        dtype=torch.float64))
        for i in range(half):
            f = math.exp(-i * math.log(10000.0) / (half - 1))
            self.assertAlmostEqual(float(pos[1, i]), math.sin(5 * f), places=12)
            self.assertAlmostEqual(float(pos[1, half + i]), math.cos(5 * f), places=12)
        self.assertAlmostEqual(float(pos[1, half - 1]), math.sin(5 / 10000.0), places=12)

    @torch.no_grad()
    def test_offset_and_none(self):
        model = small_model("abc")  # position_offset 2
        token = torch.tensor([[3]])
        expected = (model.config.embed_scale * model.tok_embed.weight[3] +
                    sinusoidal_positions(torch.tensor(2), model.config.d_model, torch.float64))
        torch.testing.assert_close(model.embed(token, torch.tensor([[0]]))[0, 0], expected)
        model = small_model("luna_elu1")  # position "none"
        torch.testing.assert_close(model.embed(token, torch.tensor([[6]]))[0, 0],
                                   model.config.embed_scale * model.tok_embed.weight[3])


if __name__ == "__main__":
    unittest.main()
