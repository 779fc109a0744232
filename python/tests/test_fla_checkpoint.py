"""Reading fla checkpoint directories (issue 20): one file or shards + index, fla's tensor names
checked one by one, the pre-2025 layout, 16-bit weights."""

import json
import tempfile
import unittest
from pathlib import Path

import torch

from fla_small import BASE, VARIANTS, small_config
from slotserve_ref.fla.checkpoint import (INDEX_FILE, FlaCheckpointError, layer_prefix,
                                          load_checkpoint, read_weight_files, write_checkpoint)
from slotserve_ref.fla.make_golden_checkpoints import to_legacy_layout
from slotserve_ref.fla.model import FlaModel
from slotserve_ref.fla.random_weights import random_tensors
from slotserve_ref.safetensors_io import save_file


def raw_config(name, **changes):
    return {**BASE, **VARIANTS[name], **changes}


class CheckpointTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.root = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, subdir, name, shards=1, dtype=torch.float32, edit=None, **changes):
        cfg = small_config(name, **changes)
        tensors = {n: v.to(dtype) for n, v in random_tensors(cfg, seed=9).items()}
        if edit:
            edit(tensors)
        return write_checkpoint(self.root / subdir, raw_config(name, **changes), tensors, shards)

    def test_sharded_equals_single_file(self):
        for name in ("abc_conv_tied", "gsa_relu_conv_gqa"):
            with self.subTest(name):
                single = self.write(f"{name}-1", name)
                sharded = self.write(f"{name}-3", name, shards=3)
                self.assertEqual(len(list(sharded.glob("model-0000?-of-00003.safetensors"))), 3)
                index = json.loads((sharded / INDEX_FILE).read_text())
                self.assertEqual(len(set(index["weight_map"].values())), 3)
                a_cfg, a = load_checkpoint(single)
                b_cfg, b = load_checkpoint(sharded)
                self.assertEqual(a_cfg, b_cfg)
                self.assertEqual(set(a), set(b))
                for n in a:
                    self.assertTrue(torch.equal(a[n], b[n]), n)
                ids = torch.arange(9) % 29
                torch.testing.assert_close(FlaModel.load(single).prefill(ids)[0],
                                           FlaModel.load(sharded).prefill(ids)[0], rtol=0, atol=0)

    def test_index_must_match_shards(self):
        sharded = self.write("s", "gsa_swish", shards=2)
        index = json.loads((sharded / INDEX_FILE).read_text())
        moved = sorted(index["weight_map"])[0]
        other = [f for f in set(index["weight_map"].values()) if f != index["weight_map"][moved]][0]
        index["weight_map"][moved] = other
        (sharded / INDEX_FILE).write_text(json.dumps(index))
        with self.assertRaisesRegex(FlaCheckpointError, f"does not hold what the index lists.*{moved}"):
            read_weight_files(sharded)
        index["weight_map"][moved] = "../elsewhere.safetensors"
        (sharded / INDEX_FILE).write_text(json.dumps(index))
        with self.assertRaisesRegex(FlaCheckpointError, "plain file name"):
            read_weight_files(sharded)
        (sharded / INDEX_FILE).unlink()
        with self.assertRaisesRegex(FlaCheckpointError, "neither model.safetensors nor"):
            read_weight_files(sharded)

    def test_missing_extra_and_misshaped_tensors_are_named(self):
        p = layer_prefix(1)
        cases = [
            (lambda t: t.pop(f"{p}.attn.f_proj.weight"), f"missing tensor\\(s\\) {p}.attn.f_proj"),
            (lambda t: t.update({f"{p}.attn.f_proj.bias": torch.zeros(6)}),
             f"unexpected tensor\\(s\\) {p}.attn.f_proj.bias"),
            (lambda t: t.update({f"{p}.attn.q_proj.weight": torch.zeros(16, 15)}),
             f"{p}.attn.q_proj.weight has shape \\[16, 15\\], expected \\[16, 16\\]"),
            (lambda t: t.pop("lm_head.weight"), "missing tensor\\(s\\) lm_head.weight"),
        ]
        for i, (edit, pattern) in enumerate(cases):
            with self.subTest(pattern):
                directory = self.write(f"bad{i}", "gsa_swish", edit=edit)
                with self.assertRaisesRegex(FlaCheckpointError, pattern):
                    load_checkpoint(directory)

    def test_tied_lm_head_may_be_present_or_absent(self):
        absent = self.write("absent", "abc_conv_tied")
        self.assertNotIn("lm_head.weight", read_weight_files(absent))
        present = self.write("present", "abc_conv_tied", edit=lambda t: t.update(
            {"lm_head.weight": t["model.embeddings.weight"].clone()}))
        ids = torch.arange(6)
        torch.testing.assert_close(FlaModel.load(absent).prefill(ids)[0],
                                   FlaModel.load(present).prefill(ids)[0], rtol=0, atol=0)

    def test_legacy_norm_first_layout_equals_todays_names(self):
        """norm_first moves the block norms into attn/mlp and fuses gate/up; the MLP norm's eps
        was 1e-5 then, so the same weights give the same logits only with that eps."""
        cfg = small_config("gsa_swish", norm_first=True)
        tensors = {n: v.float() for n, v in random_tensors(cfg, seed=2).items()}
        legacy = to_legacy_layout(cfg, tensors)
        self.assertIn(f"{layer_prefix(0)}.attn.norm.weight", legacy)
        self.assertEqual(tuple(legacy[f"{layer_prefix(0)}.mlp.gate_proj.weight"].shape),
                         (2 * cfg.intermediate_size, cfg.hidden_size))
        directory = write_checkpoint(self.root / "legacy", raw_config("gsa_swish", norm_first=True),
                                     legacy)
        ids = torch.arange(11) % 29
        got = FlaModel.load(directory).prefill(ids)[0]
        want = FlaModel(cfg, tensors).prefill(ids)[0]
        torch.testing.assert_close(got, want, rtol=0, atol=1e-12)
        today = small_config("gsa_swish")   # same weights, norm_eps 1e-6 in the MLP norm
        self.assertGreater((FlaModel(today, tensors).prefill(ids)[0] - want).abs().max().item(), 0)

    def test_16_bit_weights_widen_exactly(self):
        for dtype in (torch.bfloat16, torch.float16):
            with self.subTest(dtype):
                directory = self.write(str(dtype), "abc_rope_clamp", dtype=dtype)
                _, tensors = load_checkpoint(directory)
                stored = read_weight_files(directory)
                for n, v in tensors.items():
                    self.assertEqual(stored[n].dtype, dtype)
                    self.assertEqual(v.dtype, torch.float64)
                    self.assertTrue(torch.equal(v, stored[n].to(torch.float64)), n)

    def test_single_file_wins_over_index(self):
        directory = self.write("both", "gsa_swish", shards=2)
        save_file({"x": torch.zeros(1)}, directory / "model.safetensors")
        self.assertEqual(set(read_weight_files(directory)), {"x"})


if __name__ == "__main__":
    unittest.main()
