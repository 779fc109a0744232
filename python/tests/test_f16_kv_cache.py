"""The PyTorch reference of the engine's f16 KV cache (slotserve_ref/f16_kv_cache.py), pinned
from outside: values rounded by hand (ties to even, from float32), the hooks reaching the keys
and values of every softmax layer in both forms (the logits move, parallel = recurrent still),
and a model without softmax attention refused.
"""

import unittest

import torch

from slotserve_ref.f16_kv_cache import round_to_half, use_f16_kv_cache_
from slotserve_ref.make_random_model import build_random_model

SMALL = {"d_model": 32, "n_heads": 2, "d_ffn": 64, "n_layers": 2, "vocab_size": 50}


class RoundToHalfTest(unittest.TestCase):
    def test_values_by_hand(self):
        # 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even gives 1; 1 + 3 x 2^-11 is
        # halfway between 1 + 2^-10 and 1 + 2^-9: even is 1 + 2^-9. 70000 overflows to inf.
        x = torch.tensor([1 + 2**-11, 1 + 3 * 2**-11, -2.5, 70000.0, 2**-24], dtype=torch.float64)
        want = torch.tensor([1.0, 1 + 2**-9, -2.5, float("inf"), 2**-24], dtype=torch.float64)
        self.assertTrue(torch.equal(round_to_half(x), want))
        self.assertEqual(round_to_half(x).dtype, torch.float64)


class ModelHooksTest(unittest.TestCase):
    def test_keys_and_values_are_rounded_in_both_forms(self):
        cfg = dict(SMALL, attention={"kind": "softmax", "max_context": 16})
        plain = build_random_model(cfg, seed=4)
        rounded = use_f16_kv_cache_(build_random_model(cfg, seed=4))
        tokens = torch.tensor([1, 5, 9, 13, 2, 7, 30, 4])
        with torch.no_grad():
            parallel = rounded(tokens)
            recurrent, _ = rounded.forward_recurrent(tokens)
            moved = (parallel - plain(tokens)).abs().max().item()
        self.assertGreater(moved, 1e-6)
        self.assertLess(moved, 1e-2)
        self.assertLess((parallel - recurrent).abs().max().item(), 1e-9)

    def test_a_model_without_softmax_attention_is_refused(self):
        with self.assertRaisesRegex(ValueError, "needs softmax attention"):
            use_f16_kv_cache_(build_random_model(dict(SMALL, attention={"kind": "abc", "slots": 4}),
                                                 seed=1))


if __name__ == "__main__":
    unittest.main()
