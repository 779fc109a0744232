"""The committed golden fla checkpoints (tests/golden/fla, issue 20) still match the reference,
and carry what their README row promises (fla's names, shards, the legacy layout, a clamp
that bites)."""

import contextlib
import io
import json
import unittest
from pathlib import Path

import torch

from slotserve_ref.fla import make_golden_checkpoints as golden
from slotserve_ref.fla.checkpoint import INDEX_FILE, layer_prefix, read_weight_files, shard_names
from slotserve_ref.fla.config import FlaConfig
from slotserve_ref.fla.model import FlaModel
from slotserve_ref.fla.ops import rms_norm

ROOT = golden.DEFAULT_OUT


class GoldenFlaTest(unittest.TestCase):
    def test_committed_logits_match_the_reference(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = golden.main(["--check"])
        self.assertEqual(code, 0, out.getvalue())
        self.assertEqual(sorted(p.name for p in ROOT.iterdir() if p.is_dir()),
                         sorted(golden.VARIANTS))

    def test_layouts(self):
        p0 = layer_prefix(0)
        sharded = ROOT / "gsa_conv_gqa_sharded"
        index = json.loads((sharded / INDEX_FILE).read_text())
        self.assertEqual(set(index["weight_map"].values()), set(shard_names(3)))
        self.assertFalse((sharded / "model.safetensors").exists())
        self.assertIn(f"{p0}.attn.k_conv1d.weight", index["weight_map"])
        legacy = read_weight_files(ROOT / "gsa_legacy_norm_first")
        self.assertIn(f"{p0}.attn.norm.weight", legacy)
        self.assertNotIn(f"{p0}.mlp.up_proj.weight", legacy)
        tied = read_weight_files(ROOT / "abc_conv_tied_bf16")
        self.assertNotIn("lm_head.weight", tied)
        self.assertEqual(tied["model.embeddings.weight"].dtype, torch.bfloat16)
        config = json.loads((ROOT / "abc_rope_clamp" / "config.json").read_text())
        self.assertEqual((config["model_type"], config["use_rope"]), ("abc", True))

    def test_clamp_cuts_some_slot_logits_but_not_all(self):
        model = FlaModel.load(ROOT / "abc_rope_clamp")
        cfg: FlaConfig = model.cfg
        tokens = torch.tensor(json.loads((ROOT / "abc_rope_clamp" / "golden.json").read_text())["tokens"])
        h = model.w["model.embeddings.weight"][tokens]
        x = rms_norm(h, model.w[f"{layer_prefix(0)}.attn_norm.weight"], cfg.norm_eps)
        s = x @ model.w[f"{layer_prefix(0)}.attn.s_proj.weight"].T
        outside = ((s < cfg.clamp_min) | (s > cfg.clamp_max)).double().mean().item()
        self.assertTrue(0.05 < outside < 0.8, outside)


if __name__ == "__main__":
    unittest.main()
