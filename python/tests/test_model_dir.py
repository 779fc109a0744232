"""convert.py and make_random_model.py write exactly the docs/MODEL_FORMAT.md model directory."""

import contextlib
import io
import json
import tempfile
import unittest
from pathlib import Path

import torch

from slotserve_ref import convert, make_random_model
from slotserve_ref.config import ModelConfig
from slotserve_ref.model_dir import ModelDirError, check_tensors, load_model_dir
from slotserve_ref.safetensors_io import load_file_with_metadata
from small_models import VARIANTS, small_config, small_model

# small_models.BASE: V=23, E=12, H=3 (d=4), F=20, 2 layers.
V, E, H, D_HEAD, F = 23, 12, 3, 4, 20


def design_table(variant: str):
    """The docs/MODEL_FORMAT.md tensor table written out for the small variants, independently of
    model_dir.expected_tensors."""
    att = VARIANTS[variant]["attention"]
    names = {"tok_embed.weight": [V, E], "final_norm.weight": [E], "final_norm.bias": [E]}
    for i in range(2):
        p = f"layers.{i}."
        for norm in ("attn_norm", "ffn_norm"):
            names[p + norm + ".weight"] = [E]
            names[p + norm + ".bias"] = [E]
        for proj in ("q", "k", "v", "o"):
            if proj == "v" and att.get("tie_kv"):
                continue
            names[p + f"attn.{proj}_proj.weight"] = [E, E]
            names[p + f"attn.{proj}_proj.bias"] = [E]
        names[p + "ffn.up.weight"] = [F, E]
        names[p + "ffn.up.bias"] = [F]
        names[p + "ffn.down.weight"] = [E, F]
        names[p + "ffn.down.bias"] = [E]
        if att["kind"] == "abc":
            names[p + "attn.slot_proj.weight"] = [H * att["slots"], E]
            names[p + "attn.slot_proj.bias"] = [H * att["slots"]]
        if att["kind"] == "rfa":
            names[p + "attn.rfa_random"] = [H, att["features"], D_HEAD]
            names[p + "attn.rfa_sigma"] = [H, D_HEAD]
            if att["gate"]:
                names[p + "attn.gate_proj.weight"] = [H, E]
                names[p + "attn.gate_proj.bias"] = [H]
        if att["kind"] == "luna":
            names[p + "attn.luna_p"] = [att["length"], E]
            for proj in ("pq", "pc"):
                names[p + f"attn.{proj}_proj.weight"] = [E, E]
                names[p + f"attn.{proj}_proj.bias"] = [E]
    if VARIANTS[variant].get("tie_embeddings") is False:
        names["lm_head.weight"] = [V, E]
    return names


def quiet(function, *args):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = function(*args)
    return code, err.getvalue()


class ConvertTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = Path(self._tmp.name)
        self.tokenizer = self.tmp / "sp.model"
        self.tokenizer.write_bytes(b"\x0a\x03abc")

    def tearDown(self):
        self._tmp.cleanup()

    def checkpoint(self, variant, state_dict_key="state_dict", edit=None):
        model = small_model(variant, seed=3, dtype=torch.float32)
        state_dict = model.state_dict()
        if edit:
            edit(state_dict)
        path = self.tmp / f"{variant}.pt"
        torch.save({"config": model.config.to_dict(), state_dict_key: state_dict}, path)
        return model, path

    def test_every_variant_has_exactly_the_design_tensors(self):
        for variant in VARIANTS:
            with self.subTest(variant=variant):
                model, path = self.checkpoint(variant)
                out = self.tmp / f"out_{variant}"
                code, err = quiet(convert.main, [str(path), "--out", str(out)])
                self.assertEqual(code, 0, err)
                tensors, metadata = load_file_with_metadata(out / "model.safetensors")
                self.assertEqual({n: list(t.shape) for n, t in tensors.items()},
                                 design_table(variant))
                self.assertTrue(all(t.dtype == torch.float32 for t in tensors.values()))
                self.assertEqual(json.loads((out / "config.json").read_text()),
                                 model.config.to_dict())
                self.assertFalse((out / "tokenizer.model").exists())
                # F32 conversion is lossless: same logits from the directory.
                tokens = torch.randint(0, V, (1, 6), generator=torch.Generator().manual_seed(0))
                reloaded = load_model_dir(out, torch.float32)
                torch.testing.assert_close(reloaded(tokens), model(tokens), rtol=0, atol=0)

    def test_half_precision_dtypes_round_each_weight(self):
        for dtype, torch_dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
            with self.subTest(dtype=dtype):
                # The trainer's checkpoints keep the weights under "model".
                model, path = self.checkpoint("luna_softplus", state_dict_key="model")
                out = self.tmp / f"out_{dtype}"
                code, err = quiet(convert.main, [str(path), "--out", str(out), "--dtype", dtype,
                                                 "--tokenizer", str(self.tokenizer)])
                self.assertEqual(code, 0, err)
                tensors, _ = load_file_with_metadata(out / "model.safetensors")
                for name, original in model.state_dict().items():
                    self.assertEqual(tensors[name].dtype, torch_dtype)
                    self.assertTrue(torch.equal(tensors[name], original.to(torch_dtype)), name)
                self.assertEqual((out / "tokenizer.model").read_bytes(),
                                 self.tokenizer.read_bytes())

    def test_refusals_name_the_tensor(self):
        cases = [
            (lambda sd: sd.pop("layers.1.attn.slot_proj.bias"),
             "missing tensor.*layers.1.attn.slot_proj.bias"),
            (lambda sd: sd.__setitem__("layers.0.attn.extra", torch.zeros(1)),
             "unexpected tensor.*layers.0.attn.extra"),
            (lambda sd: sd.__setitem__("final_norm.bias", torch.zeros(E + 1)),
             r"final_norm.bias has shape \[13\], expected \[12\]"),
        ]
        for edit, pattern in cases:
            with self.subTest(pattern=pattern):
                _, path = self.checkpoint("abc", edit=edit)
                code, err = quiet(convert.main, [str(path), "--out", str(self.tmp / "bad")])
                self.assertEqual(code, 1)
                self.assertRegex(err, pattern)
        torch.save({"state_dict": {}}, self.tmp / "noconfig.pt")
        code, err = quiet(convert.main, [str(self.tmp / "noconfig.pt"), "--out",
                                         str(self.tmp / "bad")])
        self.assertEqual(code, 1)
        self.assertIn("expected a dict with keys 'config' and 'state_dict'", err)

    def test_check_tensors_refuses_tie_kv_v_proj(self):
        cfg = small_config("luna_elu1")
        tensors = {n: torch.zeros(s) for n, s in design_table("luna_elu1").items()}
        check_tensors(cfg, tensors, "t")
        tied = ModelConfig.from_dict(dict(cfg.to_dict(), attention=dict(
            cfg.attention.to_dict(), tie_kv=True)))
        with self.assertRaisesRegex(ModelDirError, "unexpected tensor.*layers.0.attn.v_proj"):
            check_tensors(tied, tensors, "t")


class MakeRandomModelTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def make(self, *args):
        return quiet(make_random_model.main, list(args))

    def test_writes_loadable_non_degenerate_model(self):
        config = {"vocab_size": 40, "d_model": 16, "n_heads": 2, "n_layers": 1, "d_ffn": 24,
                  "embed_scale": 4.0, "attention": {"kind": "rfa", "features": 4}}
        config_file = self.tmp / "c.json"
        config_file.write_text(json.dumps(config))
        tokenizer = self.tmp / "sp.model"
        tokenizer.write_bytes(b"pieces")
        code, err = self.make("--config", str(config_file), "--seed", "5", "--out",
                              str(self.tmp / "a"), "--dtype", "f16", "--tokenizer",
                              str(tokenizer), "--vocab-size", "37")
        self.assertEqual(code, 0, err)
        model = load_model_dir(self.tmp / "a")
        self.assertEqual(model.config.vocab_size, 37)
        self.assertTrue(model.config.attention.gate)  # default of the rfa kind
        self.assertEqual((self.tmp / "a" / "tokenizer.model").read_bytes(), b"pieces")
        logits = model(torch.arange(12) % 37)
        spread = logits.max(-1).values - logits.min(-1).values
        self.assertGreater(spread.min().item(), 1.0)
        # same seed, same bytes (JSON text also accepted); another seed, other weights
        code, err = self.make("--config", json.dumps(config), "--seed", "5", "--out",
                              str(self.tmp / "b"), "--dtype", "f16", "--vocab-size", "37")
        self.assertEqual(code, 0, err)
        self.assertEqual((self.tmp / "a" / "model.safetensors").read_bytes(),
                         (self.tmp / "b" / "model.safetensors").read_bytes())
        self.make("--config", json.dumps(config), "--seed", "6", "--out", str(self.tmp / "c"),
                  "--dtype", "f16", "--vocab-size", "37")
        self.assertNotEqual((self.tmp / "a" / "model.safetensors").read_bytes(),
                            (self.tmp / "c" / "model.safetensors").read_bytes())

    def test_bad_config_is_reported(self):
        code, err = self.make("--config", '{"d_modl": 8}', "--seed", "1", "--out",
                              str(self.tmp / "x"))
        self.assertEqual(code, 1)
        self.assertIn("unknown key(s) d_modl", err)
        code, err = self.make("--config", str(self.tmp / "missing.json"), "--seed", "1",
                              "--out", str(self.tmp / "x"))
        self.assertEqual(code, 1)
        self.assertIn("cannot read", err)
        self.assertFalse((self.tmp / "x").exists())


if __name__ == "__main__":
    unittest.main()
