"""The per-request state size of fla models (issue 20): the formula against the reference's
actual state tensors, and the GSA-1.3B figures quoted in docs/FLA_CHECKPOINTS.md §4."""

import unittest

from fla_small import VARIANTS, small_config, small_model
from slotserve_ref.fla.config import FlaConfig
from slotserve_ref.fla.state_size import state_bytes

GSA_13B = {"model_type": "gsa", "hidden_size": 2048, "num_hidden_layers": 24, "num_heads": 4,
           "num_slots": 64, "vocab_size": 32000}


class StateSizeTest(unittest.TestCase):
    def test_formula_counts_the_reference_state(self):
        for name in VARIANTS:
            with self.subTest(name):
                model = small_model(name)
                values = sum(t.numel() for layer in model.new_state()["layers"]
                             for t in layer.values())
                self.assertEqual(state_bytes(small_config(name), 4), 4 * values)

    def test_gsa_13b_shape(self):
        self.assertEqual(state_bytes(FlaConfig.from_dict(GSA_13B)), 24 * 1024 * 1024)
        with_conv = FlaConfig.from_dict(dict(GSA_13B, use_short_conv=True))
        self.assertEqual(state_bytes(with_conv) - 24 * 1024 * 1024, 24 * 3 * 3 * 2048 * 4)
        abc = FlaConfig.from_dict(dict(GSA_13B, model_type="abc"))   # expand_k 0.5
        self.assertEqual(state_bytes(abc), 18_923_520)

    def test_grouped_heads_share_state(self):
        full = FlaConfig.from_dict(dict(GSA_13B, num_kv_heads=4))
        grouped = FlaConfig.from_dict(dict(GSA_13B, num_kv_heads=1))
        self.assertEqual(state_bytes(grouped) * 4, state_bytes(full))


if __name__ == "__main__":
    unittest.main()
