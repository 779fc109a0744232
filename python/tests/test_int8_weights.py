"""The int8 weight-only model directory (issue 16, item 1; slotserve_ref/int8_weights.py).

The C++ loader reads exactly this format, so the tests pin it from outside the code that
writes it: the rounding on hand-written rows, which tensors are I8 for every attention kind
(lists written here by hand from docs/MODEL_FORMAT.md "Tensor names"), the refusals with their
messages, the converter end to end, seq2seq directories written and read int8, and the committed golden abc_int8 read
byte by byte with numpy instead of safetensors_io.
"""

import contextlib
import io
import json
import struct
import tempfile
import unittest
from pathlib import Path

import numpy as np
import torch

from abc_control_models import control_model
from seq2seq_small_models import small_seq2seq_model
from slotserve_ref import convert, make_random_model, make_random_seq2seq_model
from slotserve_ref.fla.checkpoint import FlaCheckpointError, load_checkpoint
from slotserve_ref.int8_weights import (Int8WeightsError, dequantize_rows, quantize_rows,
                                        quantized_names)
from slotserve_ref.model_dir import (ModelDirError, expected_tensors, load_model_dir,
                                     save_model_dir)
from slotserve_ref.safetensors_io import load_file, save_file
from slotserve_ref.seq2seq_model_dir import (expected_seq2seq_tensors, load_seq2seq_model_dir,
                                             save_seq2seq_model_dir)
from small_models import small_model

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
# small_models.BASE: V=23, E=12, H=3, F=20, 2 layers.
V, E, H, F = 23, 12, 3, 20


def quiet(function, *args):
    with contextlib.redirect_stdout(io.StringIO()) as out, \
            contextlib.redirect_stderr(io.StringIO()) as err:
        code = function(*args)
    return code, out.getvalue() + err.getvalue()


class QuantizeRowsTest(unittest.TestCase):
    def test_hand_written_rows(self):
        w = torch.tensor([
            [127.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5],  # scale 1: ties go to even
            [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],          # all zero: scale 0, q 0
            [0.0, 0.0, -3.0, 0.0, 0.0, 0.0, 0.0, 0.0],         # one nonzero: it becomes -127
            [-254.0, 1.0, 3.0, 5.0, -1.0, 2.9, 0.99, 253.0],   # scale 2 from a negative max
            # 2.5 / 127 is 2.5000000093 steps of the stored F32 scale: q = 3 (dividing by the
            # float64 quotient 1 / 127 would give the tie 2.5 -> 2)
            [1.0, 2.5 / 127, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        ], dtype=torch.float64)
        q, scale = quantize_rows(w)
        self.assertEqual(q.dtype, torch.int8)
        self.assertEqual(scale.dtype, torch.float32)
        self.assertEqual(q.tolist(), [
            [127, 0, 2, 2, 0, -2, -2, 126],
            [0] * 8,
            [0, 0, -127, 0, 0, 0, 0, 0],
            [-127, 0, 2, 2, 0, 1, 0, 126],
            [127, 3, 0, 0, 0, 0, 0, 0],
        ])
        self.assertEqual(scale[[0, 1, 3]].tolist(), [1.0, 0.0, 2.0])
        # the stored scale is the F32 rounding of max / 127, computed in float64
        self.assertEqual(scale[2].item(), np.float32(3.0 / 127))

    def test_every_weight_within_half_a_step_and_rows_reach_127(self):
        gen = torch.Generator().manual_seed(5)
        w = torch.randn(40, 33, generator=gen, dtype=torch.float64) * \
            torch.exp(torch.randn(40, 1, generator=gen, dtype=torch.float64) * 3)
        q, scale = quantize_rows(w)
        back = dequantize_rows(q, scale)
        self.assertEqual(back.dtype, torch.float64)
        error = (back - w).abs()
        bound = scale.double()[:, None] / 2
        self.assertTrue(bool((error <= bound * (1 + 1e-12)).all()),
                        f"worst error / scale = {(error / (2 * bound)).max().item()}")
        self.assertTrue(bool((error > bound / 4).any()), "no weight was rounded at all")
        self.assertEqual(q.abs().amax(dim=1).tolist(), [127] * 40)
        # dequantize is exactly q * scale, in float64
        self.assertTrue(torch.equal(back, q.double() * scale.double()[:, None]))

    def test_same_weights_same_bytes_whatever_the_float_type(self):
        w = torch.randn(6, 7, generator=torch.Generator().manual_seed(1)).float()
        q32, s32 = quantize_rows(w)
        q64, s64 = quantize_rows(w.double())
        self.assertTrue(torch.equal(q32, q64) and torch.equal(s32, s64))

    def test_refuses_what_it_cannot_quantize(self):
        w = torch.zeros(2, 3)
        w[1, 2] = float("nan")
        with self.assertRaisesRegex(Int8WeightsError, r"x: element \[1, 2\] is nan"):
            quantize_rows(w, "x")
        with self.assertRaisesRegex(Int8WeightsError, r"v: int8 quantizes 2-D matrices, got "
                                                      r"shape \[4\]"):
            quantize_rows(torch.ones(4), "v")


def per_layer(*names):
    return [f"layers.{i}.{n}.weight" for i in range(2) for n in names]


QKVO = ("attn.q_proj", "attn.k_proj", "attn.v_proj", "attn.o_proj")
FFN = ("ffn.up", "ffn.down")

# model -> (I8 matrices, tensors that are not vectors and stay F32), written from
# docs/MODEL_FORMAT.md "Tensor names".
NAME_CASES = {
    "abc": (lambda: small_model("abc"),
            ["tok_embed.weight"] + per_layer(*QKVO, "attn.slot_proj", *FFN), []),
    "abc_linformer": (lambda: control_model("linformer"),
                      ["tok_embed.weight"] + per_layer(*QKVO, *FFN),
                      ["layers.0.attn.linformer_proj", "layers.1.attn.linformer_proj"]),
    "abc_window": (lambda: control_model("window"),
                   ["tok_embed.weight"] + per_layer(*QKVO, *FFN), []),
    "rfa_concat": (lambda: small_model("rfa_concat"),
                   ["tok_embed.weight", "lm_head.weight"] + per_layer(*QKVO, *FFN),
                   [f"layers.{i}.attn.{c}" for i in range(2) for c in ("rfa_random",
                                                                       "rfa_sigma")]),
    "rfa_gate_interleave": (lambda: small_model("rfa_gate_interleave"),
                            ["tok_embed.weight"] + per_layer(*QKVO, "attn.gate_proj", *FFN),
                            [f"layers.{i}.attn.{c}" for i in range(2)
                             for c in ("rfa_random", "rfa_sigma")]),
    "luna_softplus": (lambda: small_model("luna_softplus"),
                      ["tok_embed.weight"] + per_layer(*QKVO, "attn.pq_proj", "attn.pc_proj",
                                                       *FFN),
                      ["layers.0.attn.luna_p", "layers.1.attn.luna_p"]),
    "luna_elu1_tiekv": (lambda: small_model("luna_elu1_tiekv"),
                        ["tok_embed.weight"] + per_layer("attn.q_proj", "attn.k_proj",
                                                         "attn.o_proj", "attn.pq_proj",
                                                         "attn.pc_proj", *FFN),
                        ["layers.0.attn.luna_p", "layers.1.attn.luna_p"]),
    "softmax": (lambda: small_model("softmax"), ["tok_embed.weight"] + per_layer(*QKVO, *FFN),
                []),
}


class Int8DirTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def test_which_tensors_are_quantized_for_each_attention_kind(self):
        for case, (build, matrices, constants) in NAME_CASES.items():
            with self.subTest(case=case):
                model = build()
                self.assertEqual(quantized_names(expected_tensors(model.config)),
                                 sorted(matrices))
                out = save_model_dir(model, self.tmp / case, dtype="int8")
                stored = load_file(out / "model.safetensors")
                self.assertEqual(sorted(n for n, t in stored.items() if t.dtype == torch.int8),
                                 sorted(matrices))
                for name in matrices:
                    scale = stored[name + "_scale"]
                    self.assertEqual((scale.dtype, list(scale.shape)),
                                     (torch.float32, [stored[name].shape[0]]), name)
                floats = {n for n, t in stored.items() if t.dtype == torch.float32}
                self.assertEqual(floats | set(matrices), set(stored))
                # the F32 tensors besides the scales: the constants and the vectors
                others = sorted(n for n in floats if not n.endswith("_scale"))
                self.assertEqual([n for n in others if stored[n].dim() != 1], sorted(constants))

    def test_round_trip(self):
        for variant in ("rfa_concat", "abc", "luna_softplus"):
            with self.subTest(variant=variant):
                model = small_model(variant, seed=4)  # float64 weights
                out = save_model_dir(model, self.tmp / variant, dtype="int8")
                stored = load_file(out / "model.safetensors")
                loaded = load_model_dir(out, torch.float64).state_dict()
                for name, original in model.state_dict().items():
                    if stored[name].dtype == torch.int8:
                        scale = stored[name + "_scale"].double()[:, None]
                        error = (loaded[name] - original).abs()
                        self.assertTrue(bool((error <= scale / 2 * (1 + 1e-12)).all()), name)
                        self.assertTrue(bool((error > 0).any()), f"{name} was not rounded")
                    else:  # vectors and constants: F32, exactly
                        self.assertTrue(torch.equal(loaded[name], original.float().double()),
                                        name)
                # the same weights give the same bytes; config.json is the f32 one's
                again = save_model_dir(model, self.tmp / f"{variant}_again", dtype="int8")
                self.assertEqual((out / "model.safetensors").read_bytes(),
                                 (again / "model.safetensors").read_bytes())
                f32 = save_model_dir(model, self.tmp / f"{variant}_f32", dtype="f32")
                self.assertEqual((out / "config.json").read_text(),
                                 (f32 / "config.json").read_text())
                tokens = torch.arange(10) % V
                reference = model(tokens)
                diff = (load_model_dir(out, torch.float64)(tokens) - reference).abs().max()
                self.assertTrue(0 < diff.item() < 0.1 * reference.abs().max().item(),
                                diff.item())

    def test_f32_tensors_come_first_aligned(self):
        out = save_model_dir(small_model("abc"), self.tmp / "abc", dtype="int8")
        blob = (out / "model.safetensors").read_bytes()
        (length,) = struct.unpack("<Q", blob[:8])
        header = json.loads(blob[8:8 + length])
        header.pop("__metadata__")
        first_i8 = min(e["data_offsets"][0] for e in header.values() if e["dtype"] == "I8")
        for name, entry in header.items():
            if entry["dtype"] == "F32":
                self.assertLessEqual(entry["data_offsets"][1], first_i8, name)
                self.assertEqual(entry["data_offsets"][0] % 4, 0, name)
        self.assertEqual((8 + length) % 8, 0)

    def edited(self, edit, variant="abc", model=None):
        """An int8 directory of `variant` whose stored tensors went through `edit`."""
        out = save_model_dir(model or small_model(variant), self.tmp / "edited", dtype="int8")
        tensors = load_file(out / "model.safetensors")
        edit(tensors)
        save_file(tensors, out / "model.safetensors")
        return out

    def test_refusals_name_the_tensor(self):
        q = "layers.0.attn.q_proj.weight"
        cases = [
            (lambda t: t.pop(q + "_scale"),
             rf"int8 tensor {q} has no scale: expected {q}_scale, F32 \[12\]"),
            (lambda t: t.pop(q),
             rf"tensor {q}_scale is an int8 scale without its matrix: there is no tensor {q}$"),
            (lambda t: t.__setitem__(q, torch.zeros(E, E)),
             rf"tensor {q}_scale is an int8 scale, but its matrix {q} is stored as F32, not I8"),
            (lambda t: t.__setitem__(q + "_scale", torch.ones(E + 1)),
             rf"tensor {q}_scale has shape \[13\], expected \[12\] \(one scale per row of {q}\)"),
            (lambda t: t.__setitem__(q + "_scale", torch.ones(E, dtype=torch.float16)),
             rf"tensor {q}_scale is F16, expected F32"),
            (lambda t: t.__setitem__("final_norm.weight", torch.ones(E, dtype=torch.int8)),
             r"tensor final_norm.weight is stored as I8, but only 2-D '.weight' matrices "
             r"\(Linear weights, tok_embed.weight, lm_head.weight\) may be int8; "
             r"final_norm.weight is a vector of shape \[12\]"),
            (lambda t: t.update({"layers.1.attn.slot_proj.bias": torch.ones(15, dtype=torch.int8),
                                 "layers.1.attn.slot_proj.bias_scale": torch.ones(15)}),
             r"tensor layers.1.attn.slot_proj.bias is stored as I8.*is a vector of shape \[15\]"),
            (lambda t: t.update({q: torch.zeros(E, E + 1, dtype=torch.int8)}),
             rf"tensor {q} has shape \[12, 13\], expected \[12, 12\]"),
            (lambda t: t.update({"layers.0.attn.extra.weight": torch.ones(2, 2, dtype=torch.int8),
                                 "layers.0.attn.extra.weight_scale": torch.ones(2)}),
             r"tensor layers.0.attn.extra.weight is stored as I8.*is not a tensor of this model"),
            (lambda t: t.update({"nothing_scale": torch.ones(2)}),
             r"tensor nothing_scale is an int8 scale without its matrix: there is no tensor "
             r"nothing$"),
        ]
        for edit, pattern in cases:
            with self.subTest(pattern=pattern):
                with self.assertRaisesRegex(ModelDirError, pattern):
                    load_model_dir(self.edited(edit))

    def test_refuses_int8_constants(self):
        for variant, name, shape in (("rfa_concat", "layers.0.attn.rfa_random", [3, 5, 4]),
                                     ("luna_softplus", "layers.1.attn.luna_p", [3, 12])):
            with self.subTest(name=name):
                out = self.edited(lambda t: t.update({
                    name: t[name].round().to(torch.int8),
                    name + "_scale": torch.ones(shape[0])}), variant)
                pattern = rf"tensor {name} is stored as I8.*{name} is a constant of shape " + \
                    str(shape).replace("[", r"\[").replace("]", r"\]")
                with self.assertRaisesRegex(ModelDirError, pattern):
                    load_model_dir(out)

    def test_a_file_may_mix_int8_and_float_matrices(self):
        name = "layers.1.ffn.up.weight"
        out = self.edited(lambda t: t.update({
            name: dequantize_rows(t[name], t.pop(name + "_scale")).float()}))
        self.assertEqual(load_file(out / "model.safetensors")[name].dtype, torch.float32)
        load_model_dir(out)

    def test_seq2seq_int8_round_trip(self):
        # Every cross kind's table, tied and untied: the stored I8 names are the rule's (2-D
        # `*.weight`), each with its scale, and loading gives back q * scale, which is the float
        # weight to within half a step of its row.
        for cross, extra in (("softmax", {}), ("abc", {"tie_embeddings": False}),
                             ("rfa_concat", {}), ("luna_conv", {}), ("srformer", {})):
            with self.subTest(cross=cross):
                model = small_seq2seq_model(cross, seed=3, dtype=torch.float32, **extra)
                out = save_seq2seq_model_dir(model, self.tmp / f"s2s_{cross}", dtype="int8")
                stored = load_file(out / "model.safetensors")
                expected = expected_seq2seq_tensors(model.config)
                int8 = sorted(n for n, t in stored.items() if t.dtype == torch.int8)
                self.assertEqual(int8, sorted(quantized_names(expected)))
                self.assertIn("decoder.layers.0.ffn.up.weight", int8)
                self.assertEqual(("lm_head.weight" in int8), cross == "abc")
                for name in int8:
                    self.assertEqual(stored[name + "_scale"].dtype, torch.float32)
                loaded = load_seq2seq_model_dir(out, torch.float64)
                weights = loaded.state_dict()
                original = model.state_dict()
                for name in int8:
                    w = original[name].double()
                    half_step = w.abs().amax(dim=1, keepdim=True) / 254
                    self.assertTrue(bool(((weights[name] - w).abs() <= half_step + 1e-7).all()),
                                    name)
                    want = dequantize_rows(stored[name], stored[name + "_scale"])
                    self.assertTrue(torch.equal(weights[name], want), name)
                source = torch.tensor([[3, 5, 7, 2, 9, 1]])
                target = torch.tensor([[0, 4, 6, 8]])
                diff = (loaded(source, target) - model.double()(source, target)).abs().max()
                self.assertLess(diff.item(), 0.2)
                self.assertGreater(diff.item(), 0.0)  # the int8 rounding is there

    def test_seq2seq_int8_refuses_a_scale_without_its_matrix(self):
        out = save_seq2seq_model_dir(small_seq2seq_model("softmax"), self.tmp / "s2s")
        tensors = load_file(out / "model.safetensors")
        tensors["decoder.layers.0.ffn.up.weight_scale"] = torch.ones(F, dtype=torch.float32)
        save_file(tensors, out / "model.safetensors")
        with self.assertRaisesRegex(ModelDirError, r"decoder.layers.0.ffn.up.weight_scale is an "
                                                   r"int8 scale, but its matrix"):
            load_seq2seq_model_dir(out)

    def test_fla_checkpoints_refuse_int8(self):
        out = self.tmp / "fla_gsa"
        out.mkdir()
        (out / "config.json").write_bytes((GOLDEN / "fla" / "gsa" / "config.json").read_bytes())
        tensors = load_file(GOLDEN / "fla" / "gsa" / "model.safetensors")
        name = "model.layers.0.attn.q_proj.weight"
        tensors[name] = tensors[name].round().to(torch.int8)
        save_file(tensors, out / "model.safetensors")
        with self.assertRaisesRegex(FlaCheckpointError, rf"tensor\(s\) {name} are not float"):
            load_checkpoint(out)


class Int8CommandLineTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def test_convert_int8_end_to_end(self):
        model = small_model("rfa_gate_interleave", seed=2, dtype=torch.float32)
        checkpoint = self.tmp / "ckpt.pt"
        torch.save({"config": model.config.to_dict(), "model": model.state_dict()}, checkpoint)
        out = self.tmp / "out"
        code, text = quiet(convert.main, [str(checkpoint), "--out", str(out), "--dtype", "int8"])
        self.assertEqual(code, 0, text)
        self.assertIn("int8)", text)
        stored = load_file(out / "model.safetensors")
        self.assertEqual(sorted(n for n, t in stored.items() if t.dtype == torch.int8),
                         sorted(NAME_CASES["rfa_gate_interleave"][1]))
        self.assertEqual(json.loads((out / "config.json").read_text()), model.config.to_dict())
        # the converter quantizes the checkpoint's weights exactly as save_model_dir does
        direct = save_model_dir(model, self.tmp / "direct", dtype="int8")
        self.assertEqual((out / "model.safetensors").read_bytes(),
                         (direct / "model.safetensors").read_bytes())
        tokens = torch.arange(9) % V
        diff = (load_model_dir(out, torch.float64)(tokens) - model.double()(tokens)).abs().max()
        self.assertLess(diff.item(), 0.2)

    def test_convert_int8_for_seq2seq(self):
        model = small_seq2seq_model("abc", dtype=torch.float32)
        checkpoint = self.tmp / "s2s.pt"
        torch.save({"config": model.config.to_dict(), "state_dict": model.state_dict()},
                   checkpoint)
        out = self.tmp / "o"
        code, text = quiet(convert.main, [str(checkpoint), "--out", str(out), "--dtype", "int8"])
        self.assertEqual(code, 0, text)
        # the converter quantizes the checkpoint's weights exactly as save_seq2seq_model_dir does
        direct = save_seq2seq_model_dir(model, self.tmp / "direct", dtype="int8")
        self.assertEqual((out / "model.safetensors").read_bytes(),
                         (direct / "model.safetensors").read_bytes())
        self.assertTrue(any(t.dtype == torch.int8
                            for t in load_file(out / "model.safetensors").values()))

    def test_random_model_tools(self):
        config = json.dumps({"vocab_size": 30, "d_model": 8, "n_heads": 2, "n_layers": 1,
                             "d_ffn": 16, "attention": {"kind": "softmax"}})
        code, text = quiet(make_random_model.main, ["--config", config, "--seed", "1", "--out",
                                                    str(self.tmp / "r"), "--dtype", "int8"])
        self.assertEqual(code, 0, text)
        self.assertEqual(load_file(self.tmp / "r" / "model.safetensors")[
            "tok_embed.weight"].dtype, torch.int8)
        seq2seq_config = json.dumps({"vocab_size": 30, "d_model": 8, "n_heads": 2, "d_ffn": 16,
                                     "encoder": {"n_layers": 1},
                                     "decoder": {"n_layers": 1}})
        code, text = quiet(make_random_seq2seq_model.main,
                           ["--config", seq2seq_config, "--seed", "1", "--out",
                            str(self.tmp / "s"), "--dtype", "int8"])
        self.assertEqual(code, 0, text)
        self.assertEqual(load_file(self.tmp / "s" / "model.safetensors")[
            "decoder.layers.0.ffn.up.weight"].dtype, torch.int8)


def read_raw(path: Path):
    """(header, data bytes) of a safetensors file, parsed here without safetensors_io."""
    blob = path.read_bytes()
    (length,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + length].decode("utf-8"))
    header.pop("__metadata__", None)
    return header, blob[8 + length:]


class GoldenInt8Test(unittest.TestCase):
    """tests/golden/models/abc_int8 (make_golden.py) read independently of the loader."""

    DIR = GOLDEN / "models" / "abc_int8"

    def test_loader_gives_exactly_q_times_scale(self):
        header, data = read_raw(self.DIR / "model.safetensors")
        state = load_model_dir(self.DIR, torch.float64).state_dict()
        for name in ("layers.1.attn.slot_proj.weight", "tok_embed.weight",
                     "layers.0.ffn.down.weight"):
            with self.subTest(name=name):
                entry, scale_entry = header[name], header[name + "_scale"]
                self.assertEqual(entry["dtype"], "I8")
                self.assertEqual(scale_entry["dtype"], "F32")
                begin, end = entry["data_offsets"]
                q = np.frombuffer(data[begin:end], dtype=np.int8).reshape(entry["shape"])
                begin, end = scale_entry["data_offsets"]
                scale = np.frombuffer(data[begin:end], dtype="<f4")
                self.assertEqual(list(scale.shape), entry["shape"][:1])
                expected = q.astype(np.float64) * scale.astype(np.float64)[:, None]
                np.testing.assert_array_equal(state[name].numpy(), expected)
                # the writer's rule: every row reaches ±127, nothing beyond
                self.assertEqual(np.abs(q.astype(np.int32)).max(axis=1).tolist(),
                                 [127] * q.shape[0])

    def test_header_lists_the_abc_matrices_as_i8(self):
        header, _ = read_raw(self.DIR / "model.safetensors")
        i8 = sorted(n for n, e in header.items() if e["dtype"] == "I8")
        self.assertEqual(i8, sorted(["tok_embed.weight"] +
                                    per_layer(*QKVO, "attn.slot_proj", *FFN)))
        self.assertEqual(sorted(n for n, e in header.items() if n.endswith("_scale")),
                         [n + "_scale" for n in i8])
        self.assertEqual({e["dtype"] for n, e in header.items() if n not in i8}, {"F32"})


if __name__ == "__main__":
    unittest.main()
