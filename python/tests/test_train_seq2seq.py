"""train_seq2seq.py learns a toy reverse task (a few steps only: the loss must go down) and
writes a checkpoint and model directory the converter and loader accept."""

import contextlib
import json
import io
import math
import random
import tempfile
import unittest
from pathlib import Path

import torch

import train_seq2seq
from slotserve_ref import convert
from slotserve_ref.seq2seq_config import Seq2seqConfig, merge_seq2seq_config_dict
from slotserve_ref.seq2seq_model_dir import load_seq2seq_model_dir

TOY = {"vocab_size": 12, "d_model": 16, "n_heads": 2, "d_ffn": 32, "embed_scale": 4.0,
       "bos_id": 1, "eos_id": 2, "decoder_start_id": 1,
       "encoder": {"n_layers": 1, "max_source_tokens": 8},
       "decoder": {"n_layers": 1, "attention": {"kind": "softmax", "max_context": 16}}}
CROSS = {"abc": {"kind": "abc", "slots": 4},
         "srformer": {"kind": "srformer", "segment": 2, "target_length": 6}}


def reverse_pairs(count: int, seed: int):
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        source = [rng.randrange(3, 12) for _ in range(rng.randrange(3, 6))]
        pairs.append((source, source[::-1]))
    return pairs


class TrainSeq2seqTest(unittest.TestCase):
    def test_loss_goes_down_on_a_toy_reverse_task(self):
        torch.manual_seed(0)
        for name, cross in CROSS.items():
            with self.subTest(cross=name):
                cfg = Seq2seqConfig.from_dict(merge_seq2seq_config_dict(
                    dict(TOY, cross_attention=cross)))
                model = train_seq2seq.new_model(cfg, seed=1)
                losses = train_seq2seq.train(model, reverse_pairs(64, 2), steps=40, batch=8,
                                             lr=3e-3, seed=3)
                first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
                self.assertLess(last, 0.8 * first, f"loss {first:.3f} -> {last:.3f}")

    def test_batches_pad_targets_and_score_eos(self):
        cfg = Seq2seqConfig.from_dict(merge_seq2seq_config_dict(dict(TOY, cross_attention={
            "kind": "softmax"})))
        source, inputs, labels = train_seq2seq.make_batch([([5, 6, 7], [7, 6, 5]),
                                                            ([3, 4, 8], [9])], cfg)
        self.assertEqual(source.tolist(), [[5, 6, 7], [3, 4, 8]])
        self.assertEqual(inputs.tolist(), [[1, 7, 6, 5], [1, 9, 2, 2]])
        self.assertEqual(labels.tolist(), [[7, 6, 5, 2], [9, 2, -100, -100]])

    def test_command_line_writes_a_loadable_model(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            pairs = reverse_pairs(10, 4)
            (root / "src.ids").write_text("".join(" ".join(map(str, s)) + "\n" for s, _ in pairs))
            (root / "tgt.ids").write_text("".join(" ".join(map(str, t)) + "\n" for _, t in pairs))
            config = json.dumps(dict(TOY, cross_attention={
                "kind": "luna", "length": 3, "temperature": 0.5,
                "filter": {"op": "conv", "kernel": 2, "stride": 2}}))
            with contextlib.redirect_stdout(io.StringIO()):
                code = train_seq2seq.main(["--source", str(root / "src.ids"), "--target",
                                           str(root / "tgt.ids"), "--config", config,
                                           "--out", str(root / "run"), "--steps", "3",
                                           "--batch", "2"])
                self.assertEqual(code, 0)
                self.assertEqual(convert.main([str(root / "run" / "checkpoint.pt"), "--out",
                                               str(root / "converted")]), 0)
            for directory in (root / "run" / "model", root / "converted"):
                model = load_seq2seq_model_dir(directory)
                self.assertEqual(model.config.cross_attention.filter.kernel, 2)
            self.assertEqual(len((root / "run" / "train.log").read_text().splitlines()), 2)

    def test_learning_rate_warms_up_then_decays_to_zero(self):
        rate = train_seq2seq.learning_rate
        self.assertAlmostEqual(rate(0, 100, 1.0, 10, True), 0.1)
        self.assertAlmostEqual(rate(9, 100, 1.0, 10, True), 1.0)
        self.assertAlmostEqual(rate(10, 100, 1.0, 10, True), 1.0)
        self.assertAlmostEqual(rate(55, 100, 1.0, 10, True), 0.5)
        self.assertAlmostEqual(rate(99, 100, 1.0, 10, True), 0.5 * (1 + math.cos(math.pi * 89 / 90)))
        self.assertAlmostEqual(rate(99, 100, 1.0, 10, False), 1.0)

    def test_segmented_only_srformer_is_segment_softmax_alone(self):
        """With raf_proj zeroed and frozen, training leaves it zero and the recurrent term is
        inert: the logits do not move when the RAF's leak and threshold change, and the
        parallel and recurrent forms agree."""
        cfg = Seq2seqConfig.from_dict(merge_seq2seq_config_dict(dict(
            TOY, cross_attention=CROSS["srformer"])))
        model = train_seq2seq.new_model(cfg, seed=1)
        train_seq2seq.disable_srformer_recurrence_(model)
        train_seq2seq.train(model, reverse_pairs(32, 2), steps=5, batch=4, lr=3e-3, seed=3)
        for layer in model.decoder.layers:
            self.assertEqual(float(layer.cross.raf_proj.weight.abs().max()), 0.0)
            self.assertEqual(float(layer.cross.raf_proj.bias.abs().max()), 0.0)
            self.assertFalse(layer.cross.raf_proj.weight.requires_grad)
        source = torch.tensor([[3, 4, 5, 6, 7, 2]])
        decoder_input = torch.tensor([[1, 7, 6, 5, 4, 3]])
        with torch.no_grad():
            parallel = model(source, decoder_input)
            recurrent, _ = model.decode_recurrent(source, decoder_input)
        self.assertLess(float((parallel - recurrent).abs().max()), 1e-4)
        with torch.no_grad():
            for layer in model.decoder.layers:
                layer.cross.raf_leak.fill_(0.3)
                layer.cross.raf_thre.fill_(0.01)
            self.assertTrue(torch.equal(model(source, decoder_input), parallel))
        with self.assertRaisesRegex(ValueError, "srformer"):
            train_seq2seq.disable_srformer_recurrence_(train_seq2seq.new_model(
                Seq2seqConfig.from_dict(merge_seq2seq_config_dict(dict(
                    TOY, cross_attention=CROSS["abc"]))), seed=1))

    def test_mismatched_corpus_files_are_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "a.ids").write_text("3 4\n5 6\n")
            (root / "b.ids").write_text("3 4\n")
            with self.assertRaisesRegex(ValueError, "one target per source"):
                train_seq2seq.load_pairs(root / "a.ids", root / "b.ids")


if __name__ == "__main__":
    unittest.main()


class ResumeTest(unittest.TestCase):
    """--resume-every / --stop-after: a run stopped twice and started again ends with the same
    weights, losses and log as one never stopped; a resume point from other settings is
    refused."""

    def run_main(self, root: Path, out: str, *extra: str) -> int:
        config = json.dumps(dict(TOY, cross_attention={"kind": "abc", "slots": 4}))
        with contextlib.redirect_stdout(io.StringIO()):
            return train_seq2seq.main(["--source", str(root / "src.ids"), "--target",
                                       str(root / "tgt.ids"), "--config", config, "--out",
                                       str(root / out), "--steps", "9", "--batch", "4",
                                       "--lr", "3e-3", "--warmup", "2", "--cosine-decay",
                                       "--seed", "5", "--log-every", "1", *extra])

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        pairs = reverse_pairs(24, 6)
        (self.root / "src.ids").write_text("".join(" ".join(map(str, s)) + "\n" for s, _ in pairs))
        (self.root / "tgt.ids").write_text("".join(" ".join(map(str, t)) + "\n" for _, t in pairs))

    def tearDown(self):
        self.tmp.cleanup()

    def test_a_stopped_and_resumed_run_equals_an_uninterrupted_one(self):
        self.assertEqual(self.run_main(self.root, "straight"), 0)
        self.assertEqual(self.run_main(self.root, "pieces", "--resume-every", "2",
                                       "--stop-after", "3"), 0)
        self.assertFalse((self.root / "pieces" / "checkpoint.pt").exists())
        self.assertEqual(torch.load(self.root / "pieces" / "resume.pt")["step"], 3)
        self.assertEqual(self.run_main(self.root, "pieces", "--resume-every", "2",
                                       "--stop-after", "4"), 0)
        self.assertEqual(torch.load(self.root / "pieces" / "resume.pt")["step"], 7)
        self.assertEqual(self.run_main(self.root, "pieces", "--resume-every", "2"), 0)
        self.assertFalse((self.root / "pieces" / "resume.pt").exists())
        straight = torch.load(self.root / "straight" / "checkpoint.pt")["model"]
        pieces = torch.load(self.root / "pieces" / "checkpoint.pt")["model"]
        self.assertEqual(straight.keys(), pieces.keys())
        for name in straight:
            self.assertTrue(torch.equal(straight[name], pieces[name]), name)

        def losses(out):
            return [line.split()[:4] for line in (self.root / out / "train.log").read_text()
                    .splitlines()]
        self.assertEqual(len(losses("straight")), 9)
        self.assertEqual(losses("pieces"), losses("straight"))

    def test_a_resume_point_from_other_settings_is_refused(self):
        self.assertEqual(self.run_main(self.root, "run", "--resume-every", "2",
                                       "--stop-after", "2"), 0)
        with self.assertRaisesRegex(ValueError, "resume.pt was written by a run with settings"):
            self.run_main(self.root, "run", "--resume-every", "2", "--lr", "1e-3")

    def test_stop_after_needs_resume_every(self):
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            self.run_main(self.root, "run", "--stop-after", "2")
