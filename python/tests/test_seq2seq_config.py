"""The slotserve-seq2seq config.json (docs/ARCHITECTURE.md "Encoder–decoder models") is as strict as
the decoder-only one: every
mistake is refused with a message that names the key and quotes what was found."""

import copy
import json
import unittest

from seq2seq_small_models import CROSS_VARIANTS, small_seq2seq_config
from slotserve_ref.config import ConfigError
from slotserve_ref.seq2seq_config import Seq2seqConfig


def valid_dict(cross: str = "luna_conv"):
    return small_seq2seq_config(cross).to_dict()


class Seq2seqConfigTest(unittest.TestCase):
    def assert_refused(self, data, *fragments):
        with self.assertRaises(ConfigError) as caught:
            Seq2seqConfig.from_dict(data)
        for fragment in fragments:
            self.assertIn(fragment, str(caught.exception))

    def test_round_trip_every_cross_kind(self):
        for cross in CROSS_VARIANTS:
            with self.subTest(cross=cross):
                cfg = small_seq2seq_config(cross)
                text = cfg.to_json()
                self.assertEqual(Seq2seqConfig.from_json(text), cfg)
                data = json.loads(text)
                self.assertEqual(data["format"], "slotserve-seq2seq")
                self.assertNotIn("n_layers", data)
                self.assertNotIn("attention", data)
                self.assertEqual(data["cross_attention"], CROSS_VARIANTS[cross])

    def test_documented_example_keys(self):
        data = valid_dict()
        self.assertEqual(set(data), {
            "format", "format_version", "vocab_size", "d_model", "n_heads", "d_ffn",
            "activation", "norm_eps", "position", "position_offset", "tie_embeddings",
            "embed_scale", "bos_id", "eos_id", "decoder_start_id", "encoder", "decoder",
            "cross_attention"})
        self.assertEqual(set(data["encoder"]), {"n_layers", "max_source_tokens"})
        self.assertEqual(set(data["decoder"]), {"n_layers", "attention"})

    def test_unknown_keys_are_refused_by_name(self):
        for path in ((), ("encoder",), ("decoder",), ("decoder", "attention"),
                     ("cross_attention",), ("cross_attention", "filter")):
            with self.subTest(where=".".join(path) or "top"):
                data = valid_dict()
                node = data
                for key in path:
                    node = node[key]
                node["typo_key"] = 1
                name = ".".join(path + ("typo_key",))
                self.assert_refused(data, f"unknown key(s) {name}")

    def test_missing_keys_are_refused_by_name(self):
        for path in (("decoder_start_id",), ("encoder", "max_source_tokens"),
                     ("decoder", "n_layers"), ("decoder", "attention", "slots"),
                     ("cross_attention", "temperature"), ("cross_attention", "filter"),
                     ("cross_attention", "filter", "stride"), ("vocab_size",)):
            with self.subTest(key=".".join(path)):
                data = valid_dict()
                node = data
                for key in path[:-1]:
                    node = node[key]
                del node[path[-1]]
                self.assert_refused(data, "missing required key " + ".".join(path))

    def test_out_of_range_values_are_refused_with_the_value(self):
        cases = [
            (("encoder", "max_source_tokens"), 0, "encoder.max_source_tokens must be >= 1, got 0"),
            (("encoder", "n_layers"), -1, "encoder.n_layers must be >= 1, got -1"),
            (("cross_attention", "temperature"), 0, "cross_attention.temperature must be a "
                                                    "positive finite number, got 0.0"),
            (("cross_attention", "filter", "op"), "avgpool",
             'cross_attention.filter.op must be "conv" or "maxpool", got "avgpool"'),
            (("cross_attention", "filter", "kernel"), 0,
             "cross_attention.filter.kernel must be >= 1, got 0"),
            (("cross_attention", "kind"), "linformer", 'cross_attention.kind must be "softmax" '
                                                       'or "abc" or "rfa" or "luna" or '
                                                       '"srformer", got "linformer"'),
            (("decoder", "attention", "kind"), "srformer", "decoder.attention.kind must be"),
            (("decoder_start_id",), 23, "decoder_start_id must be < vocab_size (23), got 23"),
            (("format",), "slotserve-lm", 'format must be "slotserve-seq2seq", got '
                                          '"slotserve-lm"'),
            (("cross_attention", "filter"), [3], "cross_attention.filter must be an object, "
                                                 "got an array"),
        ]
        for path, value, message in cases:
            with self.subTest(key=".".join(path)):
                data = valid_dict()
                node = data
                for key in path[:-1]:
                    node = node[key]
                node[path[-1]] = value
                self.assert_refused(data, message)

    def test_srformer_and_abc_keys(self):
        data = valid_dict("srformer")
        bad = copy.deepcopy(data)
        bad["cross_attention"]["segment"] = 0
        self.assert_refused(bad, "cross_attention.segment must be >= 1, got 0")
        bad = copy.deepcopy(data)
        bad["cross_attention"]["slots"] = 4   # an abc key on a srformer cross
        self.assert_refused(bad, "unknown key(s) cross_attention.slots")

    def test_null_filter_is_plain_luna(self):
        cfg = small_seq2seq_config("luna")
        self.assertIsNone(cfg.cross_attention.filter)
        self.assertIsNone(json.loads(cfg.to_json())["cross_attention"]["filter"])

    def test_decoder_only_config_is_refused(self):
        from slotserve_ref.config import default_config_dict
        self.assert_refused(default_config_dict("abc"), 'format must be "slotserve-seq2seq"')


if __name__ == "__main__":
    unittest.main()
