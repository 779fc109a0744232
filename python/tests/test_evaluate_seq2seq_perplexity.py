"""evaluate_seq2seq_perplexity.py against a per-pair recomputation: each target (and its end)
scored one pair at a time with the reference's recurrent form, for an F32 directory and its int8
copy, over pairs of several source and target lengths (the tool batches pairs by source length
and pads targets)."""

import contextlib
import io
import json
import math
import random
import tempfile
import unittest
from pathlib import Path

import torch

import evaluate_seq2seq_perplexity
from seq2seq_small_models import small_seq2seq_model
from slotserve_ref.seq2seq_model_dir import load_seq2seq_model_dir, save_seq2seq_model_dir


def write_ids(path: Path, rows):
    path.write_text("".join(" ".join(map(str, row)) + "\n" for row in rows))


def pair_by_pair_nll(model_dir: Path, pairs):
    """(sum of -log p, tokens): every pair alone, decoded one token at a time."""
    model = load_seq2seq_model_dir(model_dir, torch.float64)
    cfg = model.config
    nll, tokens = 0.0, 0
    with torch.no_grad():
        for source, target in pairs:
            inputs = torch.tensor([[cfg.decoder_start_id] + target])
            logits, _ = model.decode_recurrent(torch.tensor([source]), inputs)
            log_p = torch.log_softmax(logits[0], dim=-1)
            for t, label in enumerate(target + [cfg.eos_id]):
                nll -= log_p[t, label].item()
                tokens += 1
    return nll, tokens


class EvaluateSeq2seqPerplexityTest(unittest.TestCase):
    def test_matches_pair_by_pair_scoring_for_f32_and_int8(self):
        rng = random.Random(4)
        pairs = []
        for _ in range(37):  # more than a batch for the commonest source length
            source = [rng.randrange(3, 23) for _ in range(rng.choice([3, 5, 6]))]
            target = [rng.randrange(3, 23) for _ in range(rng.randrange(1, 7))]
            pairs.append((source, target))
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            write_ids(tmp / "test.src.ids", [s for s, _ in pairs])
            write_ids(tmp / "test.tgt.ids", [t for _, t in pairs])
            model = small_seq2seq_model("abc", seed=5, dtype=torch.float32)
            f32 = save_seq2seq_model_dir(model, tmp / "f32")
            int8 = save_seq2seq_model_dir(model, tmp / "int8", dtype="int8")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = evaluate_seq2seq_perplexity.main(["--data", str(tmp), str(f32), str(int8)])
            self.assertEqual(code, 0)
            results = [json.loads(line) for line in out.getvalue().splitlines()]
            self.assertEqual([r["model"] for r in results], ["f32", "int8"])
            for result, model_dir in zip(results, (f32, int8)):
                nll, tokens = pair_by_pair_nll(model_dir, pairs)
                self.assertEqual(result["pairs"], len(pairs))
                self.assertEqual(result["tokens"], tokens)
                self.assertAlmostEqual(result["nll"], nll, delta=1e-9 * nll)
                self.assertAlmostEqual(result["perplexity"], math.exp(nll / tokens),
                                       delta=1e-9 * result["perplexity"])
            # the int8 copy is a different model, close to the original
            self.assertNotEqual(results[0]["nll"], results[1]["nll"])
            self.assertLess(abs(results[1]["perplexity"] / results[0]["perplexity"] - 1), 0.05)


if __name__ == "__main__":
    unittest.main()
