"""The PyTorch reference of the engine's int8 activations (slotserve_ref/int8_activations.py),
pinned from outside: a block rounded by hand (the same numbers as the C++ quantiser's test,
tests/unit/kernels/int8_activations_test.cc), a short last block and an all-zero block, the
rounding bound, and the hooks reaching every matrix product of a model (with them, the last
logits move; rounding the inputs twice changes nothing), of an encoder–decoder model too, but
for the products the engine computes from constants or in F32.
"""

import tempfile
import unittest
from pathlib import Path

import torch

from seq2seq_small_models import small_seq2seq_model
from slotserve_ref.make_random_model import build_random_model
from slotserve_ref.int8_activations import quantise_blocks, use_int8_activations_
from slotserve_ref.model_dir import load_model_dir, save_model_dir
from slotserve_ref.seq2seq_model_dir import load_seq2seq_model_dir, save_seq2seq_model_dir


class QuantiseBlocksTest(unittest.TestCase):
    def test_a_block_by_hand(self):
        x = torch.tensor([0.5, -2.0, 1.0, 0.0, -0.0079], dtype=torch.float64)
        d = 2.0 / 127.0
        # 31.75 -> 32; -127; 63.5 -> 64 (ties to even); 0; -0.50165 -> -1.
        want = torch.tensor([32, -127, 64, 0, -1], dtype=torch.float64) * torch.tensor(
            d, dtype=torch.float32).double()
        self.assertTrue(torch.equal(quantise_blocks(x), want))

    def test_blocks_of_32_each_with_its_scale_and_a_zero_block(self):
        x = torch.zeros(2, 70, dtype=torch.float64)
        x[0, 0] = 1.0
        x[0, 40] = 0.1  # second block, its own scale: rounds to itself
        x[1, 69] = -3.0  # the short last block (64..69) of row 1
        y = quantise_blocks(x)
        self.assertAlmostEqual(y[0, 0].item(), 1.0, places=6)
        self.assertAlmostEqual(y[0, 40].item(), 0.1, places=6)
        self.assertAlmostEqual(y[1, 69].item(), -3.0, places=6)
        self.assertEqual(int((y != 0).sum()), 3)

    def test_rounding_error_is_at_most_half_a_step(self):
        gen = torch.Generator().manual_seed(5)
        x = torch.randn(4, 96, generator=gen, dtype=torch.float64)
        y = quantise_blocks(x)
        steps = x.reshape(4, 3, 32).abs().amax(-1, keepdim=True) / 127
        error = (y - x).reshape(4, 3, 32).abs()
        self.assertTrue(bool((error <= steps / 2 + 1e-6).all()))
        self.assertGreater(error.max().item(), 1e-4)
        self.assertTrue(torch.equal(quantise_blocks(y), y))  # idempotent


class ModelHooksTest(unittest.TestCase):
    def test_every_product_sees_rounded_inputs(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "m"
            model = build_random_model(
                {"d_model": 64, "n_heads": 2, "d_ffn": 128, "n_layers": 2, "vocab_size": 50,
                 "attention": {"kind": "abc", "slots": 4}}, seed=3)
            save_model_dir(model, out, dtype="int8")
            tokens = torch.tensor([1, 5, 9, 13, 2, 7])
            plain = load_model_dir(out, torch.float64)
            rounded = use_int8_activations_(load_model_dir(out, torch.float64))
            calls = []
            for module in rounded.modules():
                if isinstance(module, torch.nn.Linear):
                    module.register_forward_pre_hook(
                        lambda _m, args: calls.append(torch.equal(quantise_blocks(args[0]),
                                                                  args[0])))
            with torch.no_grad():
                moved = (rounded(tokens) - plain(tokens)).abs().max().item()
            self.assertGreater(moved, 1e-4)
            self.assertTrue(calls and all(calls))  # inputs arrive already rounded

    def test_seq2seq_products_but_the_constant_input_ones(self):
        # A seq2seq model's inputs are rounded too, but for Luna's pq_proj (it multiplies the
        # constant luna_p) and SRformer's raf_proj (the engine keeps it in F32 inside the cross
        # step): CONSTANT_INPUT_LINEARS, as the golden *_int8 seq2seq variants check.
        for cross, constant in (("luna_conv", "pq_proj"), ("srformer", "raf_proj")):
            with self.subTest(cross=cross), tempfile.TemporaryDirectory() as tmp:
                out = save_seq2seq_model_dir(small_seq2seq_model(cross, seed=4), Path(tmp) / "m",
                                             dtype="int8")
                model = use_int8_activations_(load_seq2seq_model_dir(out, torch.float64))
                rounded = {}
                for name, module in model.named_modules():
                    if isinstance(module, torch.nn.Linear):
                        module.register_forward_pre_hook(
                            lambda _m, args, name=name: rounded.setdefault(name, []).append(
                                torch.equal(quantise_blocks(args[0]), args[0])))
                with torch.no_grad():
                    model(torch.tensor([[3, 5, 7, 2, 9, 1]]), torch.tensor([[0, 4, 6, 8]]))
                left_alone = {n for n in rounded if n.endswith("." + constant)}
                self.assertTrue(left_alone)
                for name, seen in rounded.items():
                    self.assertEqual(all(seen), name not in left_alone, name)


if __name__ == "__main__":
    unittest.main()
