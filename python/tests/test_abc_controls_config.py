"""ABC's memory controls in config.json and the model directory (docs/ABC_CONTROLS.md): the
optional keys control / activation / max_positions / stride / seed, each refused with a
message naming it and the bad value; the default control written exactly as before (so older
directories stay byte-identical); the tensors each control has (written out here
independently of model_dir.block_tensors); save/load/convert round trips; the seq2seq decoder."""

import contextlib
import copy
import io
import json
import tempfile
import unittest
from pathlib import Path

import torch

from abc_control_models import CONTROL_VARIANTS, control_model, random_tokens
from slotserve_ref import convert, make_random_model
from slotserve_ref.config import ConfigError, ModelConfig
from slotserve_ref.init import randomize_
from slotserve_ref.model_dir import load_model_dir, save_model_dir
from slotserve_ref.safetensors_io import load_file
from slotserve_ref.seq2seq_config import Seq2seqConfig, merge_seq2seq_config_dict
from slotserve_ref.seq2seq_model import Seq2seqModel
from slotserve_ref.seq2seq_model_dir import expected_seq2seq_tensors

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = {
    "format": "slotserve-lm", "format_version": 1,
    "vocab_size": 100, "d_model": 16, "n_layers": 2, "n_heads": 2, "d_ffn": 32,
    "activation": "gelu", "norm_eps": 1e-5, "position": "sinusoidal", "position_offset": 0,
    "tie_embeddings": True, "embed_scale": 4.0, "bos_id": 1, "eos_id": 2,
    "attention": {"kind": "abc", "slots": 8},
}


def with_attention(**keys):
    data = copy.deepcopy(EXAMPLE)
    data["attention"].update(keys)
    return data


class ControlConfigTest(unittest.TestCase):
    def test_round_trip_writes_only_the_keys_of_a_non_default_control(self):
        written = [
            {"control": "window"},
            {"control": "linformer", "max_positions": 256},
            {"control": "compressive", "stride": 8},
            {"control": "random", "seed": (1 << 63) - 1},
            {"control": "random", "seed": 0},
            {"control": "learned", "activation": "relu"},
            {"control": "learned", "activation": "sigmoid"},
        ]
        for keys in written:
            with self.subTest(keys=keys):
                data = with_attention(**keys)
                cfg = ModelConfig.from_dict(data)
                self.assertEqual(cfg.to_dict(), data)
                self.assertEqual(list(cfg.to_dict()["attention"]), ["kind", "slots", *keys])
                self.assertEqual(ModelConfig.from_json(cfg.to_json()), cfg)

    def test_default_control_is_written_as_before(self):
        for keys in ({}, {"control": "learned"}, {"activation": "exp"},
                     {"control": "learned", "activation": "exp"}):
            with self.subTest(keys=keys):
                cfg = ModelConfig.from_dict(with_attention(**keys))
                self.assertTrue(cfg.attention.default_abc_control)
                self.assertEqual(cfg.to_dict()["attention"], {"kind": "abc", "slots": 8})
        # activation alone picks the learned control's activation.
        cfg = ModelConfig.from_dict(with_attention(activation="sigmoid"))
        self.assertEqual((cfg.attention.control, cfg.attention.abc_activation),
                         ("learned", "sigmoid"))

    def test_committed_model_directories_are_unchanged(self):
        configs = sorted((REPO / "tests" / "golden" / "models").glob("*/config.json"))
        configs += sorted((REPO / "models" / "trained").glob("*/config.json"))
        self.assertGreater(len(configs), 8)
        for path in configs:
            text = path.read_text()
            if json.loads(text).get("format") != "slotserve-lm":
                continue
            with self.subTest(config=str(path.relative_to(REPO))):
                self.assertEqual(ModelConfig.load(path).to_json(), text)

    def test_refusals_name_the_key_and_the_value(self):
        cases = [
            (with_attention(control="fifo"),
             'attention.control must be "learned" or "window" or "linformer" or '
             '"compressive" or "random", got "fifo"'),
            (with_attention(control=1), "attention.control must be .*, got 1"),
            (with_attention(activation="tanh"),
             'attention.activation must be "exp" or "relu" or "sigmoid", got "tanh"'),
            (with_attention(control="window", activation="relu"),
             'attention.activation is only allowed with attention.control "learned", got '
             'control "window"'),
            (with_attention(control="linformer"), "missing required key attention.max_positions"),
            (with_attention(control="linformer", max_positions=0),
             "attention.max_positions must be >= 1, got 0"),
            (with_attention(control="linformer", max_positions=2 ** 20 + 1),
             "attention.max_positions must be <= 1048576, got 1048577"),
            (with_attention(control="linformer", max_positions=64.0),
             "attention.max_positions must be an integer, got a number"),
            (with_attention(control="window", max_positions=64),
             'attention.max_positions is only allowed with attention.control "linformer", got '
             'control "window"'),
            (with_attention(max_positions=64),
             'attention.max_positions is only allowed with .* got control "learned"'),
            (with_attention(control="compressive"), "missing required key attention.stride"),
            (with_attention(control="compressive", stride=0), "attention.stride must be >= 1"),
            (with_attention(control="compressive", stride=2 ** 14 + 1),
             "attention.stride must be <= 16384, got 16385"),
            (with_attention(control="linformer", max_positions=8, stride=2),
             'attention.stride is only allowed with attention.control "compressive", got '
             'control "linformer"'),
            (with_attention(control="random"), "missing required key attention.seed"),
            (with_attention(control="random", seed=-1), "attention.seed must be >= 0, got -1"),
            (with_attention(control="random", seed=1 << 63),
             "attention.seed must be <= 9223372036854775807, got 9223372036854775808"),
            (with_attention(control="random", seed=True),
             "attention.seed must be an integer, got a boolean"),
            (with_attention(control="compressive", stride=2, seed=3),
             'attention.seed is only allowed with attention.control "random", got control '
             '"compressive"'),
            (with_attention(control="window", window=4), r"unknown key\(s\) attention.window"),
        ]
        for data, pattern in cases:
            with self.subTest(pattern=pattern):
                with self.assertRaisesRegex(ConfigError, pattern):
                    ModelConfig.from_dict(data)

    def test_other_kinds_do_not_take_control_keys(self):
        data = copy.deepcopy(EXAMPLE)
        data["attention"] = {"kind": "softmax", "max_context": 64, "control": "window"}
        with self.assertRaisesRegex(ConfigError, r"unknown key\(s\) attention.control"):
            ModelConfig.from_dict(data)


def control_table(name: str, slots: int, heads: int = 3, width: int = 12):
    """The attention tensors of one layer beyond q/k/v/o_proj, per docs/ABC_CONTROLS.md."""
    att = CONTROL_VARIANTS[name]
    if att.get("control", "learned") == "learned":
        return {"slot_proj.weight": [heads * slots, width], "slot_proj.bias": [heads * slots]}
    if att["control"] == "linformer":
        return {"linformer_proj": [heads, slots, att["max_positions"]]}
    return {}


def quiet(function, *args):
    with contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()) as err:
        code = function(*args)
    return code, err.getvalue()


class ControlModelDirTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def test_save_load_has_exactly_the_control_tensors(self):
        for name in CONTROL_VARIANTS:
            with self.subTest(control=name):
                model = control_model(name, seed=3, dtype=torch.float32)
                out = save_model_dir(model, self.tmp / name)
                tensors = load_file(out / "model.safetensors")
                extra = {n.split(".attn.", 1)[1]: list(t.shape) for n, t in tensors.items()
                         if n.startswith("layers.1.attn.") and not n.split(".")[3].endswith(
                             ("q_proj", "k_proj", "v_proj", "o_proj"))}
                self.assertEqual(extra, control_table(name, CONTROL_VARIANTS[name]["slots"]))
                self.assertEqual(json.loads((out / "config.json").read_text()),
                                 model.config.to_dict())
                reloaded = load_model_dir(out, torch.float32)
                tokens = random_tokens(23, 4, (1, 9))
                torch.testing.assert_close(reloaded(tokens), model(tokens), rtol=0, atol=0)

    def test_linformer_proj_is_random_and_round_trips_through_convert(self):
        model = control_model("linformer", seed=5, dtype=torch.float32)
        proj = model.layers[0].attn.linformer_proj
        self.assertGreater(proj.std().item(), 0.2)
        self.assertFalse(torch.equal(proj, model.layers[1].attn.linformer_proj))
        path = self.tmp / "ckpt.pt"
        torch.save({"config": model.config.to_dict(), "model": model.state_dict()}, path)
        code, err = quiet(convert.main, [str(path), "--out", str(self.tmp / "out")])
        self.assertEqual(code, 0, err)
        tensors = load_file(self.tmp / "out" / "model.safetensors")
        self.assertTrue(torch.equal(tensors["layers.0.attn.linformer_proj"], proj.detach()))

    def test_convert_refuses_the_wrong_control_tensors(self):
        cases = [
            ("linformer", lambda sd: sd.pop("layers.1.attn.linformer_proj"),
             "missing tensor.*layers.1.attn.linformer_proj"),
            ("window", lambda sd: sd.__setitem__("layers.0.attn.slot_proj.weight",
                                                 torch.zeros(27, 12)),
             "unexpected tensor.*layers.0.attn.slot_proj.weight"),
            ("linformer", lambda sd: sd.__setitem__("layers.0.attn.linformer_proj",
                                                    torch.zeros(3, 5, 19)),
             r"linformer_proj has shape \[3, 5, 19\], expected \[3, 5, 20\]"),
        ]
        for name, edit, pattern in cases:
            with self.subTest(pattern=pattern):
                model = control_model(name, seed=6, dtype=torch.float32)
                state_dict = model.state_dict()
                edit(state_dict)
                path = self.tmp / f"{name}.pt"
                torch.save({"config": model.config.to_dict(), "state_dict": state_dict}, path)
                code, err = quiet(convert.main, [str(path), "--out", str(self.tmp / "bad")])
                self.assertEqual(code, 1)
                self.assertRegex(err, pattern)

    def test_make_random_model_takes_a_control(self):
        config = json.dumps({"vocab_size": 30, "d_model": 16, "n_heads": 2, "n_layers": 1,
                             "d_ffn": 32, "attention": {"kind": "abc", "slots": 4,
                                                        "control": "random", "seed": 9}})
        code, err = quiet(make_random_model.main, ["--config", config, "--seed", "1",
                                                   "--out", str(self.tmp / "rnd")])
        self.assertEqual(code, 0, err)
        written = json.loads((self.tmp / "rnd" / "config.json").read_text())
        self.assertEqual(written["attention"],
                         {"kind": "abc", "slots": 4, "control": "random", "seed": 9})
        code, err = quiet(make_random_model.main, [
            "--config", '{"attention": {"kind": "abc", "control": "window", "seed": 9}}',
            "--seed", "1", "--out", str(self.tmp / "bad")])
        self.assertEqual(code, 1)
        self.assertIn('attention.seed is only allowed with attention.control "random"', err)


class Seq2seqDecoderControlTest(unittest.TestCase):
    def model(self, attention):
        cfg = Seq2seqConfig.from_dict(merge_seq2seq_config_dict({
            "vocab_size": 23, "d_model": 12, "n_heads": 3, "d_ffn": 20, "embed_scale": 3.0,
            "encoder": {"n_layers": 1, "max_source_tokens": 16},
            "decoder": {"n_layers": 2, "attention": attention}}))
        return randomize_(Seq2seqModel(cfg), seed=2).double().eval()

    @torch.no_grad()
    def test_decoder_self_attention_takes_a_control(self):
        model = self.model({"kind": "abc", "slots": 4, "control": "random", "seed": 3})
        # The random draw uses the decoder layer's own index.
        self.assertEqual([layer.attn.layer for layer in model.decoder.layers], [0, 1])
        source, target = random_tokens(23, 4, (2, 7)), random_tokens(23, 5, (2, 9))
        recurrent, _ = model.decode_recurrent(source, target)
        torch.testing.assert_close(recurrent, model(source, target), rtol=0, atol=1e-9)

    def test_decoder_tensors_and_refusals(self):
        model = self.model({"kind": "abc", "slots": 4, "control": "linformer",
                            "max_positions": 12})
        tensors = expected_seq2seq_tensors(model.config)
        self.assertEqual(tensors["decoder.layers.1.attn.linformer_proj"], (3, 4, 12))
        self.assertNotIn("decoder.layers.1.attn.slot_proj.weight", tensors)
        with self.assertRaisesRegex(ConfigError, "decoder.attention.stride is only allowed"):
            self.model({"kind": "abc", "slots": 4, "control": "window", "stride": 2})


if __name__ == "__main__":
    unittest.main()
