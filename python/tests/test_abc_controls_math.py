"""ABC's memory controls against independent statements of their math (docs/ABC_CONTROLS.md):
the paper's equivalences (window = softmax attention, window = sliding-window softmax attention,
compressive with stride 1 = window), plain loop-by-loop transcriptions of each control, the
relu rows nothing was written to, and the random control's splitmix64 draw computed by hand."""

import math
import unittest

import numpy as np
import torch

from abc_control_models import control_model
from slotserve_ref.abc_controls import mix_bits, random_control_row
from slotserve_ref.attention_softmax import SoftmaxAttention
from slotserve_ref.config import ModelConfig, merge_config_dict
from slotserve_ref.heads import split_heads

T = 13


def attention(name: str, seed: int = 0, layer: int = 0, **att):
    return control_model(name, seed=seed, **att).layers[layer].attn


def inputs(attn, seed: int, length: int = T) -> torch.Tensor:
    # Scaled up so that the attention weights are far from uniform.
    return 2.0 * torch.randn(1, length, attn.q_proj.in_features, dtype=torch.float64,
                             generator=torch.Generator().manual_seed(seed))


@torch.no_grad()
def recurrent(attn, x: torch.Tensor):
    """attn.step token by token from an empty state -> (outputs [T, E], states)."""
    state, outs, states = attn.new_state(1, x.dtype), [], []
    for t in range(x.shape[1]):
        out, state = attn.step(x[:, t], state, torch.tensor([t]))
        outs.append(out[0])
        states.append(state)
    return torch.stack(outs), states


def qkv(attn, x):
    """[T, H, d] each, for x [1, T, E]."""
    return tuple(split_heads(proj(x), attn.n_heads)[0]
                 for proj in (attn.q_proj, attn.k_proj, attn.v_proj))


def read(attn, q, keys, values):
    """softmax(keys q / sqrt(d)) values for one head: q [d], keys/values [rows, d]."""
    weights = torch.softmax(keys @ q / math.sqrt(attn.head_dim), dim=0)
    return weights @ values


@torch.no_grad()
def naive(attn, x, memory):
    """Loops over t and heads; memory(t, h, k, v) -> (keys, values) of the live rows [r, d]."""
    q, k, v = qkv(attn, x)
    out = torch.zeros(x.shape[1], attn.n_heads, attn.head_dim, dtype=x.dtype)
    for t in range(x.shape[1]):
        for h in range(attn.n_heads):
            keys, values = memory(t, h, k, v)
            out[t, h] = read(attn, q[t, h], keys, values)
    return attn.o_proj(out.reshape(x.shape[1], -1))


def assert_both_forms(test, attn, x, expected, atol=1e-12):
    torch.testing.assert_close(recurrent(attn, x)[0], expected, rtol=0, atol=atol)
    with torch.no_grad():
        torch.testing.assert_close(attn(x)[0], expected, rtol=0, atol=1e-9)


class WindowTest(unittest.TestCase):
    def test_window_at_least_the_context_is_softmax_attention(self):
        for slots in (T, T + 4):
            with self.subTest(slots=slots):
                attn = attention("window", seed=1, slots=slots)
                cfg = ModelConfig.from_dict(merge_config_dict(dict(
                    vocab_size=23, d_model=12, n_heads=3, n_layers=1, d_ffn=20,
                    attention={"kind": "softmax", "max_context": 32})))
                softmax = SoftmaxAttention(cfg).double()
                softmax.load_state_dict(attn.state_dict())  # q, k, v, o: the same weights
                x = inputs(attn, seed=2)
                with torch.no_grad():
                    expected = softmax(x)[0]
                assert_both_forms(self, attn, x, expected)

    def test_window_below_the_context_is_sliding_window_softmax(self):
        for slots in (1, 4, 5):
            with self.subTest(slots=slots):
                attn = attention("window", seed=3, slots=slots)
                x = inputs(attn, seed=4)
                expected = naive(attn, x, lambda t, h, k, v: (k[max(0, t - slots + 1):t + 1, h],
                                                              v[max(0, t - slots + 1):t + 1, h]))
                assert_both_forms(self, attn, x, expected)

    def test_ring_buffer_rows(self):
        # Token t is row t mod M; rows not written yet are empty (z = 0, not live).
        attn = attention("window", seed=5, slots=4)
        x = inputs(attn, seed=6, length=6)
        _, k, _ = qkv(attn, x)
        _, states = recurrent(attn, x)
        self.assertEqual(states[1]["z"][0, 0].tolist(), [1, 1, 0, 0])
        self.assertEqual(states[5]["z"][0, 0].tolist(), [1, 1, 1, 1])
        # The recurrent form projects one token at a time, qkv() the whole sequence at once; the
        # BLAS may sum those in another order (on an AMD EPYC the rows differed by 4e-16), so
        # "the same key" is equal to double rounding, far below any other token's key.
        torch.testing.assert_close(states[5]["k"][0, :, 1], k[5], rtol=0, atol=1e-12)
        torch.testing.assert_close(states[5]["k"][0, :, 2], k[2], rtol=0, atol=1e-12)


class CompressiveTest(unittest.TestCase):
    def test_stride_one_equals_window_up_to_the_slots(self):
        window = attention("window", seed=7, slots=T)
        compressive = attention("compressive", seed=8, slots=T, stride=1)
        compressive.load_state_dict(window.state_dict())
        x = inputs(window, seed=9)
        expected = recurrent(window, x)[0]
        assert_both_forms(self, compressive, x, expected)

    def test_mean_pooling_with_the_slot_being_filled_as_sum_over_stride(self):
        stride = 3
        attn = attention("compressive", seed=10, slots=5, stride=stride)
        x = inputs(attn, seed=11)

        def memory(t, h, k, v):
            rows = range(t // stride + 1)  # live rows; the last one may be partly filled
            pool = lambda u: torch.stack([u[j * stride:min(t, j * stride + stride - 1) + 1, h]
                                          .sum(0) / stride for j in rows])
            return pool(k), pool(v)
        assert_both_forms(self, attn, x, naive(attn, x, memory))


class LinformerTest(unittest.TestCase):
    def test_every_row_is_a_causal_projection_over_positions(self):
        attn = attention("linformer", seed=12)
        x = inputs(attn, seed=13)
        w = attn.linformer_proj.detach()  # [H, M, N]

        def memory(t, h, k, v):
            keys = sum(w[h, :, i, None] * k[i, h] for i in range(t + 1))
            values = sum(w[h, :, i, None] * v[i, h] for i in range(t + 1))
            return keys, values  # every row is live, even at t = 0
        assert_both_forms(self, attn, x, naive(attn, x, memory))


def numpy_mix_bits(x: int) -> int:
    """splitmix64's finaliser in numpy's wrapping uint64 arithmetic (a second implementation)."""
    u = np.array([x], dtype=np.uint64)
    u = u + np.uint64(0x9E3779B97F4A7C15)
    u = (u ^ (u >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    u = (u ^ (u >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return int((u ^ (u >> np.uint64(31)))[0])


def numpy_row(seed: int, layer: int, head: int, t: int, slots: int) -> int:
    stream = np.array([layer], dtype=np.uint64) * np.uint64(1 << 32) + np.uint64(head)
    word = np.uint64(seed) ^ stream[0] ^ np.uint64(numpy_mix_bits(t))
    return numpy_mix_bits(int(word)) % slots


class RandomTest(unittest.TestCase):
    def test_mix_bits_is_splitmix64(self):
        # The published splitmix64 outputs for seed 0: MixBits(i * 0x9E3779B97F4A7C15).
        golden = 0x9E3779B97F4A7C15
        published = [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F,
                     0xF88BB8A8724C81EC, 0x1B39896A51A8749B]
        for i, value in enumerate(published):
            self.assertEqual(mix_bits(i * golden % (1 << 64)), value)
            self.assertEqual(numpy_mix_bits(i * golden % (1 << 64)), value)

    def test_rows_by_hand(self):
        # (seed, layer, head, t, slots) -> row = MixBits(seed ^ (layer * 2^32 + head) ^
        # MixBits(t)) mod slots, worked out with the numpy implementation and written down, so
        # a change of the formula shows even if both implementations moved with it.
        cases = {(7, 0, 0, 0, 8): 7, (7, 1, 2, 5, 8): 0, (7, 1, 3, 39, 8): 6,
                 (0, 0, 0, 0, 5): 0, ((1 << 63) - 1, 3, 1, 1000, 32): 14,
                 (12345, 1, 0, 16, 5): 1}
        for case, row in cases.items():
            with self.subTest(case=case):
                self.assertEqual(numpy_row(*case), row)
                self.assertEqual(random_control_row(*case), row)
        self.assertEqual([random_control_row(7, 0, 0, t, 8) for t in range(8)],
                         [7, 2, 6, 7, 2, 4, 3, 0])
        self.assertEqual([random_control_row(7, 1, 2, t, 8) for t in range(8)],
                         [7, 0, 0, 7, 3, 0, 3, 5])

    def test_the_module_writes_the_drawn_rows(self):
        layer, seed = 1, 12345
        attn = attention("random", seed=14, layer=layer)
        x = inputs(attn, seed=15)
        _, k, _ = qkv(attn, x)
        _, states = recurrent(attn, x)
        for h in range(attn.n_heads):
            drawn = [numpy_row(seed, layer, h, t, attn.slots) for t in range(T)]
            counts = np.bincount(drawn, minlength=attn.slots)
            self.assertEqual(states[-1]["z"][0, h].tolist(), counts.tolist())
            for row in range(attn.slots):
                expected = sum((k[t, h] for t in range(T) if drawn[t] == row),
                               torch.zeros(attn.head_dim, dtype=torch.float64))
                torch.testing.assert_close(states[-1]["k"][0, h, row], expected, rtol=0,
                                           atol=1e-12)

    def test_naive_transcription(self):
        layer, seed = 1, 12345
        attn = attention("random", seed=16, layer=layer)
        x = inputs(attn, seed=17)

        def memory(t, h, k, v):
            drawn = [numpy_row(seed, layer, h, i, attn.slots) for i in range(t + 1)]
            rows = sorted(set(drawn))  # only rows drawn so far are live
            pick = lambda u: torch.stack([sum(u[i, h] for i in range(t + 1) if drawn[i] == r)
                                          for r in rows])
            return pick(k), pick(v)
        assert_both_forms(self, attn, x, naive(attn, x, memory))


class LearnedActivationTest(unittest.TestCase):
    def test_relu_and_sigmoid_are_weighted_averages(self):
        for name, act in (("relu", torch.relu), ("sigmoid", torch.sigmoid)):
            with self.subTest(activation=name):
                attn = attention(name, seed=18)
                x = inputs(attn, seed=19)
                s = split_heads(attn.slot_proj(x), attn.n_heads)[0].detach()  # [T, H, M]
                alpha = act(s)

                def memory(t, h, k, v):
                    a = alpha[:t + 1, h]  # [t+1, M]
                    z = a.sum(0)[:, None]
                    # A row every α of which was 0 is 0 (the limit of the formula), and live.
                    mean = lambda u: torch.where(z > 0, a.t() @ u[:t + 1, h] / z.clamp_min(1e-300),
                                                 torch.zeros(()))
                    return mean(k), mean(v)
                assert_both_forms(self, attn, x, naive(attn, x, memory))

    def test_relu_rows_never_written_are_zero_and_live(self):
        attn = attention("relu", seed=20)
        dead = [0, 3]
        with torch.no_grad():
            for h in range(attn.n_heads):
                for row in dead:
                    attn.slot_proj.weight[h * attn.slots + row] = 0.0
                    attn.slot_proj.bias[h * attn.slots + row] = -1.0  # relu(-1) = 0 always
        x = inputs(attn, seed=21)
        outputs, states = recurrent(attn, x)
        for state in states:
            self.assertEqual(state["z"][0][:, dead].abs().max().item(), 0)
            self.assertEqual(state["k"][0][:, dead].abs().max().item(), 0)
            self.assertEqual(state["v"][0][:, dead].abs().max().item(), 0)
        self.assertGreater(states[-1]["z"][0][:, [1, 2, 4]].min().item(), 0)  # the others wrote
        # The zero rows take part in the softmax with logit 0 (masking them changes the output).
        q, k, v = qkv(attn, x)
        alpha = torch.relu(split_heads(attn.slot_proj(x), attn.n_heads)[0]).detach()
        out = torch.zeros(T, attn.n_heads, attn.head_dim, dtype=torch.float64)
        masked = out.clone()
        for t in range(T):
            for h in range(attn.n_heads):
                a = alpha[:t + 1, h]
                z = a.sum(0)[:, None]
                live = z[:, 0] > 0
                keys = torch.where(z > 0, a.t() @ k[:t + 1, h] / z.clamp_min(1e-300), 0.0)
                values = torch.where(z > 0, a.t() @ v[:t + 1, h] / z.clamp_min(1e-300), 0.0)
                out[t, h] = read(attn, q[t, h], keys, values)
                masked[t, h] = read(attn, q[t, h], keys[live], values[live])
        with torch.no_grad():
            expected = attn.o_proj(out.reshape(T, -1))
            wrong = attn.o_proj(masked.reshape(T, -1))
        assert_both_forms(self, attn, x, expected)
        self.assertGreater((wrong - expected).abs().max().item(), 1e-3)


if __name__ == "__main__":
    unittest.main()
