"""fla config.json reading (issue 20): fla's defaults resolved as fla resolves them, and every
unsupported field refused with its name."""

import json
import tempfile
import unittest
from pathlib import Path

from slotserve_ref.fla.config import FlaConfig, FlaConfigError

GSA_13B = {  # the GSA-1.3B shape (issue 20) with keys fla wrote in 2024 (norm_first)
    "model_type": "gsa", "hidden_size": 2048, "num_hidden_layers": 24, "num_heads": 4,
    "num_slots": 64, "vocab_size": 32000, "tie_word_embeddings": True,
    "architectures": ["GSAForCausalLM"], "torch_dtype": "bfloat16",
    "transformers_version": "4.45.0", "fuse_cross_entropy": True, "fuse_norm": True,
    "initializer_range": 0.02, "use_cache": True, "max_position_embeddings": 2048,
    "norm_first": True,
}


def parse(**fields):
    return FlaConfig.from_dict(fields)


class DefaultsTest(unittest.TestCase):
    def test_gsa_13b_shape(self):
        cfg = FlaConfig.from_dict(GSA_13B)
        self.assertEqual((cfg.key_dim, cfg.value_dim, cfg.head_k_dim, cfg.head_v_dim),
                         (2048, 2048, 512, 512))
        self.assertEqual(cfg.num_kv_heads, 4)
        # GatedMLP: int(2048 * 4 * 2/3) = 5461, rounded up to a multiple of 256
        self.assertEqual(cfg.intermediate_size, 5632)
        self.assertEqual((cfg.gate_logit_normalizer, cfg.feature_map), (8.0, "swish"))
        self.assertEqual((cfg.norm_eps, cfg.mlp_norm_eps), (1e-6, 1e-5))  # legacy norm_first

    def test_abc_defaults(self):
        cfg = parse(model_type="abc")
        self.assertEqual((cfg.key_dim, cfg.value_dim), (1024, 2048))   # expand_k 0.5, expand_v 1
        self.assertEqual((cfg.clamp_min, cfg.clamp_max), (-32.0, 32.0))
        self.assertTrue(cfg.use_rope)
        self.assertEqual(cfg.num_slots, 64)
        self.assertEqual(cfg.mlp_norm_eps, cfg.norm_eps)

    def test_null_slots_mean_head_key_dim(self):
        self.assertEqual(parse(model_type="abc", num_slots=None).num_slots, 256)   # 1024 / 4
        self.assertEqual(parse(model_type="gsa", num_slots=None).num_slots, 512)

    def test_misspelled_constructor_argument_is_accepted(self):
        """fla's __init__ takes `exapnd_k`; configs may carry either spelling."""
        self.assertEqual(parse(model_type="gsa", exapnd_k=0.5).key_dim, 1024)
        self.assertEqual(parse(model_type="gsa", exapnd_k=0.5, expand_k=0.25).key_dim, 512)

    def test_null_elementwise_affine_means_no_weight(self):
        self.assertFalse(parse(model_type="abc", elementwise_affine=None).elementwise_affine)

    def test_kernel_choice_and_gsa_no_effect_fields_accepted(self):
        cfg = parse(model_type="gsa", fuse_swiglu=False, use_l2warp=True, clamp_min=-5,
                    use_output_gate=True, use_norm=False, gate_low_rank_dim=16)
        self.assertIsNone(cfg.clamp_min)

    def test_load_from_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "config.json"
            path.write_text(json.dumps(GSA_13B))
            self.assertEqual(FlaConfig.load(path).num_hidden_layers, 24)
            path.write_text("{")
            with self.assertRaisesRegex(FlaConfigError, "not valid JSON"):
                FlaConfig.load(path)


class RefusalTest(unittest.TestCase):
    def assert_refused(self, pattern, **fields):
        with self.assertRaisesRegex(FlaConfigError, pattern):
            parse(**fields)

    def test_unknown_fields_are_named(self):
        self.assert_refused(r"unsupported field\(s\) bar_size, foo_scale",
                            model_type="gsa", foo_scale=1, bar_size=2)
        # a GSA-only field in an ABC config is not silently ignored
        self.assert_refused("num_kv_heads", model_type="abc", num_kv_heads=2)
        self.assert_refused("feature_map", model_type="abc", feature_map="swish")

    def test_model_type(self):
        self.assert_refused("model_type must be one of abc, gsa.*'gla'", model_type="gla")
        with self.assertRaisesRegex(FlaConfigError, "model_type"):
            FlaConfig.from_dict({"hidden_size": 8})

    def test_unsupported_values_are_named(self):
        self.assert_refused("attn .*hybrid", model_type="gsa",
                            attn={"layers": [1], "num_heads": 4})
        self.assert_refused("attnres_block_size", model_type="abc", attnres_block_size=2)
        self.assert_refused("hidden_act 'powlu'", model_type="gsa", hidden_act="powlu")
        self.assert_refused("feature_map 'dpfp'", model_type="gsa", feature_map="dpfp")
        self.assert_refused("use_rope true is not supported for gsa", model_type="gsa",
                            use_rope=True)
        self.assert_refused("share_conv_kernel", model_type="gsa", share_conv_kernel=True,
                            use_short_conv=True)
        self.assert_refused("gate_logit_normalizer must not be 0", model_type="gsa",
                            gate_logit_normalizer=0)

    def test_shapes_that_do_not_divide(self):
        self.assert_refused("num_kv_heads 3 must divide num_heads 4", model_type="gsa",
                            num_kv_heads=3)
        self.assert_refused("multiples of num_heads", model_type="gsa", hidden_size=30)
        self.assert_refused("even head key dimension", model_type="abc", hidden_size=36,
                            num_heads=2)   # key_dim 18 -> head_k_dim 9
        self.assert_refused("output norm weight would not fit", model_type="gsa", expand_v=0.5)
        parse(model_type="gsa", expand_v=0.5, elementwise_affine=False)   # no weight: fine

    def test_types(self):
        self.assert_refused("hidden_size must be a positive integer", model_type="abc",
                            hidden_size=64.0)
        self.assert_refused("use_short_conv must be true or false", model_type="abc",
                            use_short_conv=1)
        self.assert_refused("clamp_min must be a number or null", model_type="abc",
                            clamp_min="low")


if __name__ == "__main__":
    unittest.main()
