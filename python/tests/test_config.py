"""config.json strictness (docs/MODEL_FORMAT.md): the same refusals as the C++ loader."""

import copy
import json
import tempfile
import unittest
from pathlib import Path

from slotserve_ref.config import ConfigError, ModelConfig, default_config_dict, merge_config_dict

DESIGN_EXAMPLE = {
    "format": "slotserve-lm", "format_version": 1,
    "vocab_size": 8000, "d_model": 256, "n_layers": 4, "n_heads": 4, "d_ffn": 1024,
    "activation": "gelu", "norm_eps": 1e-5,
    "position": "sinusoidal", "position_offset": 0,
    "tie_embeddings": True, "embed_scale": 16.0,
    "bos_id": 1, "eos_id": 2,
    "attention": {"kind": "abc", "slots": 32},
}
ATTENTIONS = [
    {"kind": "abc", "slots": 32},
    {"kind": "rfa", "features": 16, "gate": True, "feature_scale": 0.1, "eps": 1.0,
     "norm_eps": 1e-3, "layout": "interleave"},
    {"kind": "luna", "length": 16, "activation": "elu1", "tie_kv": True},
    {"kind": "softmax", "max_context": 512},
]


def with_changes(attention=None, **top):
    data = copy.deepcopy(DESIGN_EXAMPLE)
    data.update(top)
    if attention is not None:
        data["attention"] = attention
    return data


class ConfigTest(unittest.TestCase):
    def assert_refused(self, data, pattern):
        with self.assertRaisesRegex(ConfigError, pattern):
            ModelConfig.from_dict(data)

    def test_round_trip_every_kind(self):
        for attention in ATTENTIONS:
            with self.subTest(kind=attention["kind"]):
                data = with_changes(attention=attention)
                cfg = ModelConfig.from_dict(data)
                self.assertEqual(cfg.to_dict(), data)
                self.assertEqual(ModelConfig.from_json(cfg.to_json()), cfg)
        with tempfile.TemporaryDirectory() as tmp:
            cfg = ModelConfig.from_dict(with_changes(attention=ATTENTIONS[1]))
            cfg.save(Path(tmp) / "config.json")
            self.assertEqual(ModelConfig.load(Path(tmp) / "config.json"), cfg)

    def test_design_example_values(self):
        cfg = ModelConfig.from_dict(DESIGN_EXAMPLE)
        self.assertEqual((cfg.vocab_size, cfg.d_model, cfg.head_dim), (8000, 256, 64))
        self.assertEqual(cfg.attention.slots, 32)
        self.assertTrue(cfg.tie_embeddings)

    def test_unknown_keys_are_errors(self):
        self.assert_refused(with_changes(vocab_sise=5), r"unknown key\(s\) vocab_sise")
        self.assert_refused(with_changes(attention={"kind": "abc", "slots": 4, "gate": True}),
                            r"unknown key\(s\) attention.gate")

    def test_missing_keys_are_errors(self):
        for key in DESIGN_EXAMPLE:
            with self.subTest(key=key):
                data = with_changes()
                del data[key]
                self.assert_refused(data, f"missing required key {key}")
        self.assert_refused(with_changes(attention={"kind": "rfa", "features": 4}),
                            "missing required key attention.gate")

    def test_wrong_values_say_what_was_expected(self):
        cases = [
            (with_changes(format="other"), 'format must be "slotserve-lm", got "other"'),
            (with_changes(format_version=2), "format_version must be 1, got 2"),
            (with_changes(vocab_size=0), "vocab_size must be >= 1, got 0"),
            (with_changes(d_model=256.0), "d_model must be an integer, got a number"),
            (with_changes(n_heads=True), "n_heads must be an integer, got a boolean"),
            (with_changes(activation="silu"), 'activation must be "gelu" or "relu", got "silu"'),
            (with_changes(tie_embeddings=1), "tie_embeddings must be true or false"),
            (with_changes(norm_eps=0), "norm_eps must be a positive finite number"),
            (with_changes(position="rope"), 'position must be "sinusoidal" or "none"'),
            (with_changes(n_heads=3), "d_model must be a multiple of n_heads"),
            (with_changes(eos_id=8000), r"eos_id must be < vocab_size \(8000\), got 8000"),
            (with_changes(attention={"kind": "abc", "slots": 0}),
             "attention.slots must be >= 1, got 0"),
            (with_changes(attention={"kind": "linear"}), "attention.kind must be"),
            (with_changes(attention=dict(ATTENTIONS[1], layout="zip")),
             'attention.layout must be "concat" or "interleave"'),
            (with_changes(attention=dict(ATTENTIONS[2], activation="relu")),
             'attention.activation must be "softplus" or "elu1"'),
            (with_changes(attention=[]), "attention must be an object, got an array"),
        ]
        for data, pattern in cases:
            with self.subTest(pattern=pattern):
                self.assert_refused(data, pattern)

    def test_json_errors(self):
        with self.assertRaisesRegex(ConfigError, "config.json: not valid JSON"):
            ModelConfig.from_json("{")
        with self.assertRaisesRegex(ConfigError, "the top level must be an object"):
            ModelConfig.from_json("[1]")

    def test_merge_fills_defaults_but_keeps_unknown_keys(self):
        merged = merge_config_dict({"vocab_size": 100, "attention": {"kind": "luna", "length": 8}})
        cfg = ModelConfig.from_dict(merged)
        self.assertEqual(cfg.vocab_size, 100)
        self.assertEqual(cfg.attention.length, 8)
        self.assertEqual(cfg.attention.activation,
                         default_config_dict("luna")["attention"]["activation"])
        with self.assertRaisesRegex(ConfigError, "attention.slotz"):
            ModelConfig.from_dict(merge_config_dict({"attention": {"slotz": 3}}))
        self.assertEqual(json.loads(cfg.to_json())["format"], "slotserve-lm")


if __name__ == "__main__":
    unittest.main()
