"""abc_chunked.abc_chunked_forward (train.py's fast ABC) equals the reference parallel form,
values and gradients, for every chunk size, including chunks that do not divide the length."""

import unittest

import torch

from abc_chunked import abc_chunked_forward, use_chunked_abc
from small_models import small_model


class AbcChunkedTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.model = small_model("abc", seed=3)
        self.attn = self.model.layers[0].attn
        # Large inputs spread the slot logits, exercising the running-max rescaling.
        self.x = torch.randn(2, 23, self.model.config.d_model, dtype=torch.float64) * 3

    def test_values_match_reference(self):
        expected = self.attn(self.x)
        for chunk in (1, 4, 7, 23, 64):
            got = abc_chunked_forward(self.attn, self.x, chunk)
            torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-10,
                                       msg=f"chunk {chunk}")

    def test_gradients_match_reference(self):
        x = self.x.clone().requires_grad_(True)
        expected = torch.autograd.grad(self.attn(x).square().sum(), [x, self.attn.slot_proj.weight])
        got = torch.autograd.grad(abc_chunked_forward(self.attn, x, 5).square().sum(),
                                  [x, self.attn.slot_proj.weight])
        for g, e in zip(got, expected):
            torch.testing.assert_close(g, e, rtol=1e-9, atol=1e-9)

    def test_use_chunked_abc_keeps_model_logits(self):
        tokens = torch.randint(0, self.model.config.vocab_size, (2, 19))
        expected = self.model(tokens)
        self.assertEqual(use_chunked_abc(self.model, chunk=6), self.model.config.n_layers)
        torch.testing.assert_close(self.model(tokens), expected, rtol=1e-10, atol=1e-10)


if __name__ == "__main__":
    unittest.main()
