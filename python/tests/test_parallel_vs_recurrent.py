"""The parallel (training) form and the recurrent (serving) form are different computations of
the same math (docs/MODEL_FORMAT.md "The attention kinds"); they must agree for every attention kind
and variant."""

import unittest

import torch

from small_models import VARIANTS, small_model

BATCH, LENGTH = 2, 17


def random_tokens(vocab: int, seed: int, shape=(BATCH, LENGTH)) -> torch.Tensor:
    return torch.randint(0, vocab, shape, generator=torch.Generator().manual_seed(seed))


class ParallelVsRecurrentTest(unittest.TestCase):
    @torch.no_grad()
    def test_float64_forms_agree(self):
        for name in VARIANTS:
            with self.subTest(variant=name):
                model = small_model(name, seed=1)
                tokens = random_tokens(model.config.vocab_size, seed=2)
                parallel = model(tokens)
                recurrent, _ = model.forward_recurrent(tokens)
                self.assertEqual(parallel.shape, (BATCH, LENGTH, model.config.vocab_size))
                torch.testing.assert_close(recurrent, parallel, rtol=0, atol=1e-10)

    @torch.no_grad()
    def test_float32_forms_agree(self):
        for name in VARIANTS:
            with self.subTest(variant=name):
                model = small_model(name, seed=3, dtype=torch.float32)
                tokens = random_tokens(model.config.vocab_size, seed=4)
                recurrent, _ = model.forward_recurrent(tokens)
                self.assertEqual(recurrent.dtype, torch.float32)
                torch.testing.assert_close(recurrent, model(tokens), rtol=0, atol=1e-4)

    @torch.no_grad()
    def test_prefix_then_continue_equals_whole(self):
        # prefill(n) followed by more tokens equals feeding everything at once.
        for name in VARIANTS:
            with self.subTest(variant=name):
                model = small_model(name, seed=5)
                tokens = random_tokens(model.config.vocab_size, seed=6)
                whole, _ = model.forward_recurrent(tokens)
                _, state = model.forward_recurrent(tokens[:, :7])
                rest, _ = model.forward_recurrent(tokens[:, 7:], state=state, start=7)
                torch.testing.assert_close(rest, whole[:, 7:], rtol=0, atol=1e-12)

    @torch.no_grad()
    def test_batch_rows_at_different_positions(self):
        # One step over rows whose states have absorbed different numbers of tokens equals
        # stepping each row alone (position-dependent parts: Luna's t, the KV cache row,
        # sinusoidal positions).
        for name in VARIANTS:
            with self.subTest(variant=name):
                model = small_model(name, seed=7)
                vocab = model.config.vocab_size
                short = random_tokens(vocab, seed=8, shape=(1, 3))
                long = random_tokens(vocab, seed=9, shape=(1, 9))
                _, short_state = model.forward_recurrent(short)
                _, long_state = model.forward_recurrent(long)
                next_tokens = torch.tensor([4, 11])
                batched_state = [{key: torch.cat([a[key], b[key]]) for key in a}
                                 for a, b in zip(short_state, long_state)]
                logits, _ = model.step(next_tokens, batched_state, torch.tensor([3, 9]))
                alone_short, _ = model.forward_recurrent(
                    torch.cat([short, next_tokens[:1, None]], dim=1))
                alone_long, _ = model.forward_recurrent(
                    torch.cat([long, next_tokens[1:, None]], dim=1))
                torch.testing.assert_close(logits[0], alone_short[0, -1], rtol=0, atol=1e-12)
                torch.testing.assert_close(logits[1], alone_long[0, -1], rtol=0, atol=1e-12)

    @torch.no_grad()
    def test_context_matters(self):
        # Guards the tests above against a degenerate model where attention does nothing.
        for name in VARIANTS:
            with self.subTest(variant=name):
                model = small_model(name, seed=10)
                tokens = random_tokens(model.config.vocab_size, seed=11)
                altered = tokens.clone()
                altered[:, 1] = (altered[:, 1] + 1) % model.config.vocab_size
                moved = (model(altered)[:, -1] - model(tokens)[:, -1]).abs().max()
                self.assertGreater(moved.item(), 1e-3)

    def test_softmax_refuses_context_beyond_max(self):
        model = small_model("softmax")
        tokens = torch.zeros(1, model.config.attention.max_context + 1, dtype=torch.long)
        with self.assertRaisesRegex(ValueError, "max_context"):
            model(tokens)
        with self.assertRaisesRegex(ValueError, "max_context"):
            model.step(tokens[:, 0], model.new_state(1),
                       torch.tensor([model.config.attention.max_context]))


if __name__ == "__main__":
    unittest.main()
