"""Each cross kind's memory build and read (docs/ARCHITECTURE.md "Encoder–decoder models") against a
naive, loop-by-loop
implementation written here from the text of §8, independently of the reference's vectorised
code; plus ConvLuna's filter windows and SRformer's segment schedule and RAF update."""

import math
import unittest

import torch

from seq2seq_small_models import small_seq2seq_model
from slotserve_ref.cross_attention_luna import filter_windows
from slotserve_ref.cross_attention_srformer import segment_count, segment_index

SOURCE = 10


def softmax(xs):
    top = max(xs)
    e = [math.exp(x - top) for x in xs]
    return [v / sum(e) for v in e]


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def per_head(matrix, head, d):
    """[k, E] tensor -> list over positions of the head's d-vector (plain floats)."""
    return [row[head * d:(head + 1) * d].tolist() for row in matrix]


def naive_read(q, keys, values):
    """softmax(keys q / sqrt d)^T values."""
    w = softmax([dot(k, q) / math.sqrt(len(q)) for k in keys])
    return [sum(w[i] * values[i][c] for i in range(len(keys))) for c in range(len(q))]


class CrossKindFixture:
    """A cross module of a small random model, a random X and a random decoder input x_t."""

    def __init__(self, cross: str, seed: int = 0):
        model = small_seq2seq_model(cross, "abc", seed=seed)
        self.cfg = model.config
        self.layer = model.decoder.layers[1].cross
        gen = torch.Generator().manual_seed(seed + 100)
        self.x_src = torch.randn(1, SOURCE, self.cfg.d_model, generator=gen, dtype=torch.float64)
        self.x_t = torch.randn(1, self.cfg.d_model, generator=gen, dtype=torch.float64)
        self.h, self.d = self.cfg.n_heads, self.cfg.head_dim
        with torch.no_grad():
            self.k_all = self.layer.k_proj(self.x_src[0])
            self.v_all = self.layer.v_proj(self.x_src[0])
            self.q_all = self.layer.q_proj(self.x_t[0])

    def heads(self, head):
        d = self.d
        return (per_head(self.k_all, head, d), per_head(self.v_all, head, d),
                self.q_all[head * d:(head + 1) * d].tolist())

    @torch.no_grad()
    def reference_step(self, positions=(0,)):
        """The module's own memory build + step, before o_proj (o_proj is checked through the
        whole model's parallel == recurrent test and is the same Linear for every kind)."""
        memory = self.layer.build_memory(self.x_src)
        out, _ = self.layer.step(self.x_t, memory, self.layer.new_state(1, torch.float64),
                                 torch.tensor(positions))
        return memory, out[0]

    def finish(self, per_head_outputs):
        """Concatenate heads and apply o_proj, as the module does."""
        flat = torch.tensor([c for head in per_head_outputs for c in head], dtype=torch.float64)
        with torch.no_grad():
            return self.layer.o_proj(flat)


class CrossMemoryTest(unittest.TestCase):
    def assert_close(self, actual, expected):
        torch.testing.assert_close(actual, expected, rtol=0, atol=1e-12)

    def test_softmax(self):
        f = CrossKindFixture("softmax", seed=1)
        _, out = f.reference_step()
        expected = [naive_read(q, k, v) for k, v, q in (f.heads(h) for h in range(f.h))]
        self.assert_close(out, f.finish(expected))

    def test_abc_slots_average_the_source(self):
        f = CrossKindFixture("abc", seed=2)
        memory, out = f.reference_step()
        m = f.layer.slots
        with torch.no_grad():
            logits = f.layer.slot_proj(f.x_src[0])        # [k, H*M]
        expected = []
        for h in range(f.h):
            k, v, q = f.heads(h)
            k_bar, v_bar = [], []
            for slot in range(m):
                alpha = softmax([logits[i, h * m + slot].item() for i in range(SOURCE)])
                k_bar.append([sum(alpha[i] * k[i][c] for i in range(SOURCE)) for c in range(f.d)])
                v_bar.append([sum(alpha[i] * v[i][c] for i in range(SOURCE)) for c in range(f.d)])
            self.assert_close(memory["k"][0, h], torch.tensor(k_bar, dtype=torch.float64))
            expected.append(naive_read(q, k_bar, v_bar))
        self.assert_close(out, f.finish(expected))

    def test_rfa_sums_features(self):
        for variant in ("rfa_concat", "rfa_interleave"):
            with self.subTest(variant=variant):
                f = CrossKindFixture(variant, seed=3)
                _, out = f.reference_step()
                cross = f.cfg.cross_attention
                w = (f.layer.rfa_random * f.layer.rfa_sigma.unsqueeze(1)).detach()

                def phi(u, h):
                    norm = math.sqrt(dot(u, u)) + cross.norm_eps
                    angles = [dot(w[h, j].tolist(), u) / norm for j in range(cross.features)]
                    if cross.layout == "concat":
                        feats = [math.sin(a) for a in angles] + [math.cos(a) for a in angles]
                    else:
                        feats = [g(a) for a in angles for g in (math.sin, math.cos)]
                    return [cross.feature_scale * x for x in feats]

                expected = []
                for h in range(f.h):
                    k, v, q = f.heads(h)
                    phi_k = [phi(k[i], h) for i in range(SOURCE)]
                    phi_q = phi(q, h)
                    z = [sum(p[j] for p in phi_k) for j in range(2 * cross.features)]
                    denominator = max(dot(phi_q, z), cross.eps)
                    expected.append([sum(dot(phi_q, phi_k[i]) * v[i][c] for i in range(SOURCE))
                                     / denominator for c in range(f.d)])
                self.assert_close(out, f.finish(expected))

    def naive_filter(self, rows, spec, weight, bias):
        out, start = [], 0
        while start < len(rows):
            taps = [start + u for u in range(spec.kernel) if start + u < len(rows)]
            if spec.op == "conv":
                out.append([sum(weight[u] * rows[start + u][c] for u in range(len(taps))) + bias
                            for c in range(len(rows[0]))])
            else:
                out.append([max(rows[p][c] for p in taps) for c in range(len(rows[0]))])
            start += spec.stride
        return out

    def test_luna_packing_with_and_without_filter(self):
        for variant in ("luna", "luna_conv", "luna_maxpool"):
            with self.subTest(variant=variant):
                f = CrossKindFixture(variant, seed=4)
                memory, out = f.reference_step()
                cross = f.cfg.cross_attention
                with torch.no_grad():
                    packing = f.layer.pq_proj(f.layer.luna_p)       # [L, E]
                expected = []
                for h in range(f.h):
                    k, v, q = f.heads(h)
                    if cross.filter is not None:
                        weight = bias = None
                        if cross.filter.op == "conv":
                            weight = f.layer.filter.weight.tolist()
                            bias = f.layer.filter.bias.item()
                        k = self.naive_filter(k, cross.filter, weight, bias)
                        v = self.naive_filter(v, cross.filter, weight, bias)
                        self.assertEqual(len(k), -(-SOURCE // cross.filter.stride))
                    p = per_head(packing, h, f.d)
                    k_hat, v_hat = [], []
                    for row in p:
                        alpha = softmax([dot(row, ki) / (math.sqrt(f.d) * cross.temperature)
                                         for ki in k])
                        k_hat.append([sum(a * ki[c] for a, ki in zip(alpha, k))
                                      for c in range(f.d)])
                        v_hat.append([sum(a * vi[c] for a, vi in zip(alpha, v))
                                      for c in range(f.d)])
                    self.assert_close(memory["v"][0, h], torch.tensor(v_hat, dtype=torch.float64))
                    expected.append(naive_read(q, k_hat, v_hat))
                self.assert_close(out, f.finish(expected))

    def test_filter_windows(self):
        # k = 7, kernel 3, stride 2: starts 0, 2, 4, 6 (ceil(7/2) = 4 rows); the last window has
        # one tap in range and two past the end.
        positions, valid = filter_windows(7, 3, 2)
        self.assertEqual(positions[:, 0].tolist(), [0, 2, 4, 6])
        self.assertEqual(valid.tolist(), [[True] * 3, [True] * 3, [True] * 3,
                                          [True, False, False]])
        # stride larger than the kernel: positions between windows are never read.
        positions, valid = filter_windows(10, 2, 3)
        self.assertEqual(positions[valid].tolist(), [0, 1, 3, 4, 6, 7, 9])
        self.assertEqual(len(positions), 4)


class SrformerTest(unittest.TestCase):
    def test_segment_schedule(self):
        # m = ceil(10/3) = 4 segments, q = 6: i = min(floor(4t/6), 3).
        self.assertEqual(segment_count(10, 3), 4)
        t = torch.arange(9)
        self.assertEqual(segment_index(t, 4, 6).tolist(), [0, 0, 1, 2, 2, 3, 3, 3, 3])
        # more segments than target positions: m = 5, q = 3 -> 0, 1, 3, then clamped at 4.
        self.assertEqual(segment_index(torch.arange(5), 5, 3).tolist(), [0, 1, 3, 4, 4])

    @torch.no_grad()
    def test_steps_follow_the_raf_recurrence(self):
        f = CrossKindFixture("srformer", seed=5)
        layer, cross = f.layer, f.cfg.cross_attention
        memory = layer.build_memory(f.x_src)
        state = layer.new_state(1, torch.float64)
        m = -(-SOURCE // cross.segment)
        leak, thre = layer.raf_leak.item(), layer.raf_thre.item()
        w, b = layer.raf_proj.weight.tolist(), layer.raf_proj.bias.tolist()
        mems = [[[0.0] * f.d for _ in range(f.d)] for _ in range(f.h)]
        rs = [None] * f.h
        previous, spikes, quiet = -1, 0, 0
        for t in range(8):
            out, state = layer.step(f.x_t, memory, state, torch.tensor([t]))
            segment = min(t * m // cross.target_length, m - 1)
            self.assertEqual(state["segment"].tolist(), [segment])
            expected = []
            for h in range(f.h):
                k, v, q = f.heads(h)
                if segment != previous:
                    rows = [i for i in range(SOURCE) if i // cross.segment == segment]
                    p = [[sum(k[i][r] * v[i][c] for i in range(SOURCE) if i not in rows)
                          for c in range(f.d)] for r in range(f.d)]       # KV - K_Si^T V_Si
                    r_new = []
                    for r in range(f.d):
                        x = [dot(w[o], p[r]) + b[o] for o in range(f.d)]
                        mem = [leak * mems[h][r][c] + x[c] for c in range(f.d)]
                        y = [mem[c] / thre - 1 for c in range(f.d)]
                        spikes += sum(yc > 0 for yc in y)
                        quiet += sum(yc <= 0 for yc in y)
                        mems[h][r] = [mem[c] - thre * (y[c] > 0) for c in range(f.d)]
                        r_new.append([max(yc, 0.0) for yc in y])
                    rs[h] = r_new
                    torch.testing.assert_close(state["mem"][0, h],
                                               torch.tensor(mems[h], dtype=torch.float64),
                                               rtol=0, atol=1e-12)
                rows = [i for i in range(SOURCE) if i // cross.segment == segment]
                o_s = naive_read(q, [k[i] for i in rows], [v[i] for i in rows])
                k_norm = math.sqrt(sum(x * x for row in k for x in row))
                recurrent = [sum(q[r] * rs[h][r][c] for r in range(f.d)) / max(k_norm, 1e-6)
                             for c in range(f.d)]
                expected.append([a + c for a, c in zip(o_s, recurrent)])
            previous = segment
            torch.testing.assert_close(out[0], f.finish(expected), rtol=0, atol=1e-12)
        # The data exercises both sides of the threshold.
        self.assertGreater(spikes, 0)
        self.assertGreater(quiet, 0)


if __name__ == "__main__":
    unittest.main()
