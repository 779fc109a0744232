"""Seq2seq model directories (docs/ARCHITECTURE.md "Encoder–decoder models"): the tensor set written
out here from the text of §8,
save/load round trips, refusals by name, the converter path and the random-model CLI."""

import contextlib
import io
import json
import tempfile
import unittest
from pathlib import Path

import torch

from seq2seq_small_models import CROSS_VARIANTS, random_ids, small_seq2seq_config, \
    small_seq2seq_model
from slotserve_ref import convert, make_random_seq2seq_model
from slotserve_ref.model_dir import ModelDirError
from slotserve_ref.safetensors_io import load_file, save_file
from slotserve_ref.seq2seq_model_dir import load_seq2seq_model_dir, save_seq2seq_model_dir

# seq2seq_small_models.BASE: V=23, E=12, H=3 (d=4), F=20, 2 encoder and 2 decoder layers.
V, E, H, D, F = 23, 12, 3, 4, 20


def design_table(cross_name: str):
    """The tensors of docs/ARCHITECTURE.md "Encoder–decoder models" for a small model with abc (M=4)
    self-attention."""
    cross = CROSS_VARIANTS[cross_name]
    names = {"tok_embed.weight": [V, E]}

    def block(p, with_cross):
        for norm in ("attn_norm", "ffn_norm") + (("cross_norm",) if with_cross else ()):
            names[f"{p}.{norm}.weight"] = [E]
            names[f"{p}.{norm}.bias"] = [E]
        for part in ("attn", "cross") if with_cross else ("attn",):
            for proj in "qkvo":
                names[f"{p}.{part}.{proj}_proj.weight"] = [E, E]
                names[f"{p}.{part}.{proj}_proj.bias"] = [E]
        names[f"{p}.ffn.up.weight"], names[f"{p}.ffn.up.bias"] = [F, E], [F]
        names[f"{p}.ffn.down.weight"], names[f"{p}.ffn.down.bias"] = [E, F], [E]

    for i in range(2):
        block(f"encoder.layers.{i}", False)
        p = f"decoder.layers.{i}"
        block(p, True)
        names[f"{p}.attn.slot_proj.weight"], names[f"{p}.attn.slot_proj.bias"] = [H * 4, E], [H * 4]
        kind = cross["kind"]
        if kind == "abc":
            names[f"{p}.cross.slot_proj.weight"] = [H * cross["slots"], E]
            names[f"{p}.cross.slot_proj.bias"] = [H * cross["slots"]]
        elif kind == "rfa":
            names[f"{p}.cross.rfa_random"] = [H, cross["features"], D]
            names[f"{p}.cross.rfa_sigma"] = [H, D]
        elif kind == "luna":
            names[f"{p}.cross.luna_p"] = [cross["length"], E]
            names[f"{p}.cross.pq_proj.weight"], names[f"{p}.cross.pq_proj.bias"] = [E, E], [E]
            if cross["filter"] and cross["filter"]["op"] == "conv":
                names[f"{p}.cross.filter.weight"] = [cross["filter"]["kernel"]]
                names[f"{p}.cross.filter.bias"] = [1]
        elif kind == "srformer":
            names[f"{p}.cross.raf_proj.weight"], names[f"{p}.cross.raf_proj.bias"] = [D, D], [D]
            names[f"{p}.cross.raf_leak"], names[f"{p}.cross.raf_thre"] = [1], [1]
    for stack in ("encoder", "decoder"):
        names[f"{stack}.final_norm.weight"] = [E]
        names[f"{stack}.final_norm.bias"] = [E]
    return names


class Seq2seqModelDirTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_written_tensors_are_the_design_table(self):
        for cross in CROSS_VARIANTS:
            with self.subTest(cross=cross):
                out = save_seq2seq_model_dir(small_seq2seq_model(cross), self.root / cross)
                tensors = load_file(out / "model.safetensors")
                self.assertEqual({n: list(t.shape) for n, t in tensors.items()},
                                 design_table(cross))
                self.assertEqual(json.loads((out / "config.json").read_text()),
                                 small_seq2seq_config(cross).to_dict())

    @torch.no_grad()
    def test_round_trip_gives_the_same_logits(self):
        model = small_seq2seq_model("luna_conv", "softmax", seed=3, tie_embeddings=False)
        out = save_seq2seq_model_dir(model, self.root / "m")
        loaded = load_seq2seq_model_dir(out, torch.float64)
        source, target = random_ids(V, 1, (1, 9)), random_ids(V, 2, (1, 6))
        torch.testing.assert_close(loaded(source, target), model(source, target),
                                   rtol=0, atol=1e-5)  # weights rounded to f32 once

    def rewrite(self, change):
        out = save_seq2seq_model_dir(small_seq2seq_model("srformer"), self.root / "bad")
        tensors = load_file(out / "model.safetensors")
        change(tensors)
        save_file(tensors, out / "model.safetensors")
        return out

    def test_loader_refuses_bad_tensors_by_name(self):
        cases = {
            "missing tensor(s) decoder.layers.1.cross.raf_thre":
                lambda t: t.pop("decoder.layers.1.cross.raf_thre"),
            "unexpected tensor(s) decoder.layers.0.cross.slot_proj.weight":
                lambda t: t.__setitem__("decoder.layers.0.cross.slot_proj.weight",
                                        torch.zeros(12, E)),
            "tensor decoder.layers.0.cross.raf_proj.weight has shape [4, 5], expected [4, 4]":
                lambda t: t.__setitem__("decoder.layers.0.cross.raf_proj.weight",
                                        torch.zeros(D, 5)),
            "tensor encoder.final_norm.bias has shape [11], expected [12]":
                lambda t: t.__setitem__("encoder.final_norm.bias", torch.zeros(11)),
        }
        for message, change in cases.items():
            with self.subTest(message=message):
                out = self.rewrite(change)
                with self.assertRaises(ModelDirError) as caught:
                    load_seq2seq_model_dir(out)
                self.assertIn(message, str(caught.exception))

    def test_loader_refuses_a_bad_config_by_name(self):
        out = save_seq2seq_model_dir(small_seq2seq_model("abc"), self.root / "cfg")
        data = json.loads((out / "config.json").read_text())
        data["cross_attention"]["slots"] = 0
        (out / "config.json").write_text(json.dumps(data))
        with self.assertRaisesRegex(ValueError, r"cross_attention\.slots must be >= 1, got 0"):
            load_seq2seq_model_dir(out)

    @torch.no_grad()
    def test_converter_writes_a_seq2seq_checkpoint(self):
        model = small_seq2seq_model("rfa_interleave", "luna_tiekv", seed=5)
        checkpoint = self.root / "ckpt.pt"
        torch.save({"config": model.config.to_dict(),
                    "model": {n: t.float() for n, t in model.state_dict().items()}}, checkpoint)
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(convert.main([str(checkpoint), "--out", str(self.root / "conv"),
                                           "--dtype", "bf16"]), 0)
        loaded = load_seq2seq_model_dir(self.root / "conv")
        self.assertEqual(load_file(self.root / "conv" / "model.safetensors")[
            "decoder.layers.0.cross.rfa_sigma"].dtype, torch.bfloat16)
        source, target = random_ids(V, 1, (1, 9)), random_ids(V, 2, (1, 6))
        torch.testing.assert_close(loaded(source, target), model(source, target),
                                   rtol=0, atol=0.2)  # bf16 weights

    def test_converter_refuses_a_missing_tensor_by_name(self):
        model = small_seq2seq_model("abc")
        state = model.state_dict()
        del state["decoder.layers.0.cross.slot_proj.bias"]
        checkpoint = self.root / "ckpt.pt"
        torch.save({"config": model.config.to_dict(), "state_dict": state}, checkpoint)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(convert.main([str(checkpoint), "--out", str(self.root / "x")]), 1)
        self.assertIn("missing tensor(s) decoder.layers.0.cross.slot_proj.bias", err.getvalue())

    def test_random_model_cli_every_cross_kind(self):
        for cross in ("softmax", "abc", "rfa", "luna", "srformer"):
            with self.subTest(cross=cross):
                config = {"vocab_size": 31, "d_model": 8, "n_heads": 2, "d_ffn": 16,
                          "encoder": {"n_layers": 1}, "decoder": {"n_layers": 1},
                          "cross_attention": {"kind": cross}}
                with contextlib.redirect_stdout(io.StringIO()):
                    code = make_random_seq2seq_model.main(
                        ["--config", json.dumps(config), "--seed", "3",
                         "--out", str(self.root / cross)])
                self.assertEqual(code, 0)
                model = load_seq2seq_model_dir(self.root / cross)
                self.assertEqual(model.config.cross_attention.kind, cross)

    def test_random_model_cli_refuses_unknown_keys(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = make_random_seq2seq_model.main(
                ["--config", '{"cross_attention": {"kind": "abc", "slotz": 3}}', "--seed", "1",
                 "--out", str(self.root / "x")])
        self.assertEqual(code, 1)
        self.assertIn("unknown key(s) cross_attention.slotz", err.getvalue())


if __name__ == "__main__":
    unittest.main()
