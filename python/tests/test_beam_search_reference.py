"""The reference beam search (slotserve_ref/beam_search.py), against answers found without it:
width 1 is the model's own greedy decoding, and a beam wide enough to keep every hypothesis
finds the best-scoring translation that enumerating every sequence finds."""

import itertools
import math
import unittest

import torch

from seq2seq_small_models import random_ids, small_seq2seq_model
from slotserve_ref.beam_search import beam_search, beam_search_batch, select_rows

SOURCE = 6


def enumerated_best(model, source, max_length, length_penalty):
    """Every finished sequence of at most max_length tokens (ending in eos, or max_length long),
    scored from the teacher-forced logits: (best score, its ids without eos)."""
    cfg = model.config
    vocab = cfg.vocab_size
    others = [t for t in range(vocab) if t != cfg.eos_id]
    sequences = []
    for length in range(1, max_length + 1):
        for prefix in itertools.product(others, repeat=length - 1):
            endings = range(vocab) if length == max_length else [cfg.eos_id]
            sequences += [list(prefix) + [end] for end in endings]
    best_score, best_ids = -math.inf, None
    for length in range(1, max_length + 1):
        group = [s for s in sequences if len(s) == length]
        decoder_input = torch.tensor([[cfg.decoder_start_id] + s[:-1] for s in group])
        logits = model(source.expand(len(group), -1), decoder_input)
        logprobs = torch.log_softmax(logits.double(), dim=-1)
        chosen = logprobs.gather(2, torch.tensor(group)[:, :, None])[:, :, 0].sum(dim=1)
        scores = chosen / length ** length_penalty
        index = int(scores.argmax())
        if scores[index].item() > best_score:
            best_score, best_ids = scores[index].item(), group[index]
    return best_score, [t for t in best_ids if t != cfg.eos_id]


class BeamSearchReferenceTest(unittest.TestCase):

    def test_width_one_is_greedy(self):
        for cross, self_kind, seed in [("abc", "abc", 3), ("srformer", "rfa_gate", 4),
                                       ("luna_conv", "softmax", 5)]:
            with self.subTest(cross=cross, self_kind=self_kind):
                model = small_seq2seq_model(cross, self_kind, seed=seed)
                source = random_ids(23, seed, (1, SOURCE))
                expected = model.greedy(source, max_new_tokens=9)[0]
                self.assertEqual(beam_search(model, source[0].tolist(), 1, 9, 1.0), expected)

    def test_a_beam_that_keeps_everything_finds_the_enumerated_best(self):
        for length_penalty in (0.0, 1.0, 2.0):
            with self.subTest(length_penalty=length_penalty):
                model = small_seq2seq_model("rfa_concat", "abc", seed=11, tie_embeddings=False)
                # eos's logit 0, near the others': ending early competes with length 3.
                with torch.no_grad():
                    model.lm_head.weight[model.config.eos_id] = 0.0
                source = random_ids(23, 12, (1, SOURCE))
                _, expected = enumerated_best(model, source, 3, length_penalty)
                found = beam_search(model, source[0].tolist(), 23 * 23 + 1, 3, length_penalty)
                self.assertEqual(found, expected)

    def test_sources_searched_together_find_what_each_finds_alone(self):
        model = small_seq2seq_model("softmax", "abc", seed=21)
        sources = [random_ids(23, 30 + i, (SOURCE,)).tolist() for i in range(4)]
        alone = [beam_search(model, s, 4, 10, 1.0) for s in sources]
        self.assertEqual(beam_search_batch(model, sources, 4, 10, 1.0), alone)
        self.assertGreater(len({tuple(ids) for ids in alone}), 1)  # the sources matter

    def test_select_rows_reaches_every_tensor(self):
        value = {"a": torch.arange(6).view(3, 2), "b": [torch.arange(3), {"c": torch.ones(3)}]}
        picked = select_rows(value, torch.tensor([2, 0, 2]))
        self.assertEqual(picked["a"].tolist(), [[4, 5], [0, 1], [4, 5]])
        self.assertEqual(picked["b"][0].tolist(), [2, 0, 2])
        self.assertEqual(picked["b"][1]["c"].shape, (3,))
        with self.assertRaisesRegex(TypeError, "int"):
            select_rows({"n": 3}, torch.tensor([0]))

    def test_bad_width_is_refused(self):
        model = small_seq2seq_model("abc")
        with self.assertRaisesRegex(ValueError, "width >= 1"):
            beam_search(model, [1, 2, 3], 0, 5, 1.0)


if __name__ == "__main__":
    unittest.main()
