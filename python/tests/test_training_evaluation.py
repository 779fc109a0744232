"""The evaluation protocol (evaluation.py) scores every token exactly once, the batched parallel
and recurrent evaluations agree, and train.py's schedule and initialisation behave as
documented."""

import math
import types
import unittest

import torch

import evaluate_pytorch
import train
from evaluation import window_batches, windows
from small_models import small_model


class WindowsTest(unittest.TestCase):
    def test_every_token_once_in_order(self):
        books = [list(range(10, 17)), [5, 6], list(range(30, 41))]
        chunks = list(windows(books, 4))
        self.assertEqual([len(c) for c in chunks], [4, 3, 2, 4, 4, 3])
        self.assertEqual([t for c in chunks for t in c], [t for b in books for t in b])

    def test_max_tokens_keeps_whole_windows(self):
        books = [list(range(10))]
        self.assertEqual(sum(len(c) for c in windows(books, 4, max_tokens=9)), 8)
        self.assertEqual(sum(len(c) for c in windows(books, 4, max_tokens=2)), 4)

    def test_batches_start_with_bos_and_shift(self):
        inputs, targets, mask = next(window_batches([[7, 8, 9], [4]], 3, bos_id=1, batch=2))
        self.assertEqual(inputs.tolist(), [[1, 7, 8], [1, 1, 1]])
        self.assertEqual(targets.tolist(), [[7, 8, 9], [4, 0, 0]])
        self.assertEqual(mask.tolist(), [[1, 1, 1], [1, 0, 0]])


class EvaluateTest(unittest.TestCase):
    def test_recurrent_equals_parallel(self):
        for name in ("abc", "rfa_gate_concat", "luna_softplus", "softmax"):
            model = small_model(name, seed=5)
            books = [[int(t) for t in torch.randint(3, model.config.vocab_size, (n,))]
                     for n in (9, 4, 13)]
            parallel = evaluate_pytorch.evaluate(model, books, 5, "parallel", batch=3)
            recurrent = evaluate_pytorch.evaluate(model, books, 5, "recurrent", batch=4)
            self.assertEqual(parallel["tokens"], 26)
            self.assertEqual(recurrent["tokens"], 26)
            self.assertAlmostEqual(parallel["nll"], recurrent["nll"], places=8, msg=name)


class ScheduleTest(unittest.TestCase):
    def test_warmup_stable_decay(self):
        args = types.SimpleNamespace(lr=1.0, warmup=10, steps=100, decay_steps=20,
                                     min_lr_ratio=0.1)
        self.assertAlmostEqual(train.learning_rate(0, args), 0.1)
        self.assertEqual(train.learning_rate(50, args), 1.0)
        self.assertEqual(train.learning_rate(80, args), 1.0)
        self.assertAlmostEqual(train.learning_rate(100, args), 0.1)
        longer = types.SimpleNamespace(**dict(vars(args), steps=200))
        for step in range(80):  # extending --steps leaves the steps before the decay unchanged
            self.assertEqual(train.learning_rate(step, args), train.learning_rate(step, longer))

    def test_initialisation_is_deterministic(self):
        first, second = small_model("rfa_gate_concat"), small_model("rfa_gate_concat")
        train.initialise_(first, 7)
        train.initialise_(second, 7)
        for (name, a), b in zip(first.named_parameters(), second.parameters()):
            self.assertTrue(torch.equal(a, b), name)
        self.assertFalse(first.layers[0].attn.rfa_random.requires_grad)
        self.assertTrue(math.isclose(float(first.layers[0].attn.gate_proj.bias[0]), 2.0))


if __name__ == "__main__":
    unittest.main()
