"""The pieces of the fla reference against values worked out by hand (issue 20)."""

import math
import unittest

import torch

from slotserve_ref.fla import ops


def t(*values):
    return torch.tensor(values, dtype=torch.float64)


class ActivationAndNormTest(unittest.TestCase):
    def test_silu(self):
        # silu(x) = x / (1 + e^-x): silu(0) = 0, silu(1) = 1/(1+1/e), silu(-2) = -2/(1+e^2)
        got = ops.silu(t(0.0, 1.0, -2.0))
        want = t(0.0, 1 / (1 + math.exp(-1)), -2 / (1 + math.exp(2)))
        torch.testing.assert_close(got, want, rtol=0, atol=1e-15)

    def test_rms_norm(self):
        # x = (3, 4): mean square 12.5; eps 0.5 -> divide by sqrt(13) = 3.6056
        got = ops.rms_norm(t(3.0, 4.0), t(2.0, -1.0), eps=0.5)
        want = t(6 / math.sqrt(13), -4 / math.sqrt(13))
        torch.testing.assert_close(got, want, rtol=0, atol=1e-15)
        torch.testing.assert_close(ops.rms_norm(t(3.0, 4.0), None, 0.5),
                                   t(3 / math.sqrt(13), 4 / math.sqrt(13)), rtol=0, atol=1e-15)

    def test_gated_rms_norm(self):
        # rms of (1, -1) is 1 (eps 0); gates (0, 2): silu 0 and 2/(1+e^-2)
        got = ops.gated_rms_norm(t(1.0, -1.0), t(0.0, 2.0), t(1.0, 3.0), eps=0.0)
        torch.testing.assert_close(got, t(0.0, -3 * 2 / (1 + math.exp(-2))), rtol=0, atol=1e-15)

    def test_swiglu_mlp(self):
        x = t(1.0, 2.0)
        gate_w, up_w = t(1.0, 0.0)[None], t(0.0, 1.0)[None]   # gate = x0 = 1, up = x1 = 2
        down_w = t(3.0)[:, None]
        got = ops.swiglu_mlp(x[None], gate_w, up_w, down_w)
        torch.testing.assert_close(got, t(3 * 2 / (1 + math.exp(-1)))[None], rtol=0, atol=1e-15)


class GsaGateAndFeatureMapTest(unittest.TestCase):
    def test_forget_gate_and_write_weight(self):
        # f = 0: logsigmoid = -ln 2; normalizer 8: g = -ln2/8, s = 1 - 2^(-1/8)
        # f = 3: logsigmoid(3) = -ln(1 + e^-3)
        g, s = ops.gsa_gates(t(0.0, 3.0), normalizer=8.0)
        torch.testing.assert_close(g, t(-math.log(2) / 8, -math.log(1 + math.exp(-3)) / 8),
                                   rtol=0, atol=1e-15)
        torch.testing.assert_close(s, t(1 - 2 ** (-1 / 8), 1 - (1 + math.exp(-3)) ** (-1 / 8)),
                                   rtol=0, atol=1e-15)
        # a very negative logit forgets almost everything: decay -> 0 as f -> -inf when
        # normalizer 1, and the write weight -> 1
        g, s = ops.gsa_gates(t(-40.0), normalizer=1.0)
        self.assertAlmostEqual(g.item(), -40.0, places=12)
        self.assertAlmostEqual(s.item(), 1.0, places=12)

    def test_feature_maps(self):
        x = t(-1.0, 2.0)
        torch.testing.assert_close(ops.gsa_feature_map(x, "relu", None), t(0.0, 2.0))
        torch.testing.assert_close(ops.gsa_feature_map(x, "swish", None), ops.silu(x))
        swap = t(0.0, 1.0, 1.0, 0.0).view(2, 2)   # T2R: relu(x W^T) with W swapping entries
        torch.testing.assert_close(ops.gsa_feature_map(x, "t2r", swap), t(2.0, 0.0))


class RotaryTest(unittest.TestCase):
    def test_neox_halves(self):
        # d = 4: pairs (0, 2) at frequency 1 and (1, 3) at 10000^(-1/2) = 0.01
        x = t(1.0, 2.0, 3.0, 4.0).view(1, 1, 4)
        got = ops.rotary(x, torch.tensor([2]))[0, 0]
        a, b = 2.0, 2.0 * 0.01
        want = t(1 * math.cos(a) - 3 * math.sin(a), 2 * math.cos(b) - 4 * math.sin(b),
                 3 * math.cos(a) + 1 * math.sin(a), 4 * math.cos(b) + 2 * math.sin(b))
        torch.testing.assert_close(got, want, rtol=0, atol=1e-14)
        torch.testing.assert_close(ops.rotary(x, torch.tensor([0])), x)


class ShortConvTest(unittest.TestCase):
    def test_taps_and_window(self):
        # 1 channel, W = 3, weights (w0, w1, w2) = (1, 10, 100): tap 2 takes the current input
        weight = t(1.0, 10.0, 100.0).view(1, 1, 3)
        window = t(0.0, 0.0).view(2, 1)
        outs = []
        for value in (1.0, 2.0, 3.0):
            y, window = ops.causal_conv_step(t(value), window, weight)
            outs.append(y.item())
        pre = [100.0, 200 + 10, 300 + 20 + 1]
        self.assertEqual(window.flatten().tolist(), [2.0, 3.0])   # the last W-1 inputs
        for got, u in zip(outs, pre):
            self.assertAlmostEqual(got, u / (1 + math.exp(-u)), places=12)
        y, last = ops.causal_conv_chunk(t(1.0, 2.0, 3.0).view(3, 1), t(0.0, 0.0).view(2, 1),
                                        weight)
        torch.testing.assert_close(y.flatten(), t(*outs))
        self.assertEqual(last.flatten().tolist(), [2.0, 3.0])

    def test_chunk_continues_from_window(self):
        weight = torch.randn(4, 1, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
        x = torch.randn(6, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
        whole, _ = ops.causal_conv_chunk(x, torch.zeros(2, 4, dtype=torch.float64), weight)
        _, window = ops.causal_conv_chunk(x[:4], torch.zeros(2, 4, dtype=torch.float64), weight)
        rest, _ = ops.causal_conv_chunk(x[4:], window, weight)
        torch.testing.assert_close(rest, whole[4:], rtol=0, atol=1e-14)


if __name__ == "__main__":
    unittest.main()
