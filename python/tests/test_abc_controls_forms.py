"""ABC's memory controls (docs/ABC_CONTROLS.md): the parallel form (training) and the recurrent
form (serving) are different computations of the same math, and must agree for every control,
whether the sequence is fed whole, token by token, split in two, or in a batch whose rows are at
different positions. Also: the context limits of linformer and compressive."""

import unittest

import torch

from abc_control_models import CONTROL_VARIANTS, control_model, random_tokens
from slotserve_ref.attention_abc import AbcAttention
from slotserve_ref.attention_abc_controls import AbcControlAttention

BATCH, LENGTH = 2, 17


class ControlFormsTest(unittest.TestCase):
    def test_every_control_uses_the_control_module(self):
        for name in CONTROL_VARIANTS:
            with self.subTest(control=name):
                model = control_model(name)
                self.assertEqual([type(layer.attn) for layer in model.layers],
                                 [AbcControlAttention] * 2)
                self.assertEqual([layer.attn.layer for layer in model.layers], [0, 1])
        # learned with an explicit "exp" is today's module.
        model = control_model("relu", activation="exp")
        self.assertIs(type(model.layers[0].attn), AbcAttention)

    @torch.no_grad()
    def test_float64_forms_agree(self):
        for name in CONTROL_VARIANTS:
            with self.subTest(control=name):
                model = control_model(name, seed=1)
                tokens = random_tokens(model.config.vocab_size, 2, (BATCH, LENGTH))
                parallel = model(tokens)
                recurrent, _ = model.forward_recurrent(tokens)
                self.assertEqual(parallel.shape, (BATCH, LENGTH, model.config.vocab_size))
                torch.testing.assert_close(recurrent, parallel, rtol=0, atol=1e-9)

    @torch.no_grad()
    def test_float32_forms_agree(self):
        for name in CONTROL_VARIANTS:
            with self.subTest(control=name):
                model = control_model(name, seed=3, dtype=torch.float32)
                tokens = random_tokens(model.config.vocab_size, 4, (BATCH, LENGTH))
                recurrent, _ = model.forward_recurrent(tokens)
                self.assertEqual(recurrent.dtype, torch.float32)
                torch.testing.assert_close(recurrent, model(tokens), rtol=0, atol=1e-4)

    @torch.no_grad()
    def test_prefix_then_continue_equals_whole(self):
        for name in CONTROL_VARIANTS:
            with self.subTest(control=name):
                model = control_model(name, seed=5)
                tokens = random_tokens(model.config.vocab_size, 6, (BATCH, LENGTH))
                whole = model(tokens)
                _, state = model.forward_recurrent(tokens[:, :11])
                rest, _ = model.forward_recurrent(tokens[:, 11:], state=state, start=11)
                torch.testing.assert_close(rest, whole[:, 11:], rtol=0, atol=1e-9)

    @torch.no_grad()
    def test_batch_rows_at_different_positions(self):
        # The controls' row choice (t mod M, t // stride, W[:, t], the random draw) is per
        # batch row.
        for name in CONTROL_VARIANTS:
            with self.subTest(control=name):
                model = control_model(name, seed=7)
                vocab = model.config.vocab_size
                short = random_tokens(vocab, 8, (1, 3))
                long = random_tokens(vocab, 9, (1, 12))
                _, short_state = model.forward_recurrent(short)
                _, long_state = model.forward_recurrent(long)
                next_tokens = torch.tensor([4, 11])
                batched = [{key: torch.cat([a[key], b[key]]) for key in a}
                           for a, b in zip(short_state, long_state)]
                logits, _ = model.step(next_tokens, batched, torch.tensor([3, 12]))
                alone_short = model(torch.cat([short, next_tokens[:1, None]], dim=1))
                alone_long = model(torch.cat([long, next_tokens[1:, None]], dim=1))
                torch.testing.assert_close(logits[0], alone_short[0, -1], rtol=0, atol=1e-9)
                torch.testing.assert_close(logits[1], alone_long[0, -1], rtol=0, atol=1e-9)

    @torch.no_grad()
    def test_context_matters(self):
        # Guards the tests above against a model whose attention carries nothing.
        for name in CONTROL_VARIANTS:
            with self.subTest(control=name):
                model = control_model(name, seed=10)
                tokens = random_tokens(model.config.vocab_size, 11, (BATCH, LENGTH))
                altered = tokens.clone()
                altered[:, 1] = (altered[:, 1] + 1) % model.config.vocab_size
                moved = (model(altered)[:, -1] - model(tokens)[:, -1]).abs().max()
                self.assertGreater(moved.item(), 1e-3)

    @torch.no_grad()
    def test_window_forgets_beyond_its_reach(self):
        # Two layers of a 4-row window: the last token sees tokens back to t - 6 at most, so a
        # change at token 1 cannot reach position 16, but one at token 10 does.
        model = control_model("window", seed=12, slots=4)
        tokens = random_tokens(model.config.vocab_size, 13, (1, LENGTH))
        for position, reaches in ((1, False), (9, False), (10, True)):
            altered = tokens.clone()
            altered[0, position] = (altered[0, position] + 1) % model.config.vocab_size
            moved = (model(altered)[0, -1] - model(tokens)[0, -1]).abs().max().item()
            self.assertEqual(moved > 1e-6, reaches, f"token {position} moved {moved}")
            recurrent, _ = model.forward_recurrent(altered)
            torch.testing.assert_close(recurrent, model(altered), rtol=0, atol=1e-9)

    def test_gradients_reach_the_control_parameters(self):
        # Training uses the parallel form: linformer_proj and slot_proj must learn.
        for name, parameter in (("linformer", "linformer_proj"), ("relu", "slot_proj.weight"),
                                ("sigmoid", "slot_proj.weight")):
            with self.subTest(control=name):
                model = control_model(name, seed=14)
                tokens = random_tokens(model.config.vocab_size, 15, (BATCH, LENGTH))
                model(tokens).square().sum().backward()
                grad = dict(model.named_parameters())[f"layers.0.attn.{parameter}"].grad
                self.assertTrue(torch.isfinite(grad).all())
                self.assertGreater(grad.abs().max().item(), 0)
        model = control_model("linformer", seed=14)
        model(random_tokens(23, 15, (1, 6))).sum().backward()
        grad = model.layers[0].attn.linformer_proj.grad
        # Only the columns of positions 0..5 took part.
        self.assertGreater(grad[:, :, :6].abs().min().item(), 0)
        self.assertEqual(grad[:, :, 6:].abs().max().item(), 0)


class ContextLimitTest(unittest.TestCase):
    @torch.no_grad()
    def test_linformer_and_compressive_refuse_positions_beyond_their_limit(self):
        cases = (("linformer", 20, r"at most 20 tokens \(attention.max_positions = 20\)"),
                 ("compressive", 20, r"at most 20 tokens \(attention.slots x attention.stride "
                                     r"= 5 x 4 = 20\)"))
        for name, limit, pattern in cases:
            with self.subTest(control=name):
                model = control_model(name, seed=16)
                tokens = random_tokens(model.config.vocab_size, 17, (1, limit + 1))
                model(tokens[:, :limit])  # exactly the limit is fine
                with self.assertRaisesRegex(ValueError, "21 tokens.*" + pattern):
                    model(tokens)
                _, state = model.forward_recurrent(tokens[:, :limit])
                with self.assertRaisesRegex(ValueError, rf"position {limit}\b.*" + pattern):
                    model.step(tokens[:, limit], state, torch.tensor([limit]))

    @torch.no_grad()
    def test_the_other_controls_have_no_limit(self):
        for name in ("window", "random", "relu", "sigmoid"):
            with self.subTest(control=name):
                model = control_model(name, seed=18)
                tokens = random_tokens(model.config.vocab_size, 19, (1, 60))
                recurrent, _ = model.forward_recurrent(tokens)
                torch.testing.assert_close(recurrent, model(tokens), rtol=0, atol=1e-9)


if __name__ == "__main__":
    unittest.main()
