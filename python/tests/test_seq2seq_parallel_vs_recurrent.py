"""The teacher-forced parallel form and the step-by-step recurrent form (prefill the source,
then one target token at a time) compute the same docs/ARCHITECTURE.md "Encoder–decoder models"
math; they must agree for every
cross kind and several decoder self-attention kinds."""

import unittest

import torch

from seq2seq_small_models import CROSS_VARIANTS, SELF_VARIANTS, random_ids, small_seq2seq_model

BATCH, SOURCE, TARGET = 2, 11, 9


class Seq2seqParallelVsRecurrentTest(unittest.TestCase):
    @torch.no_grad()
    def test_float64_forms_agree(self):
        for cross in CROSS_VARIANTS:
            for self_kind in SELF_VARIANTS:
                with self.subTest(cross=cross, self_kind=self_kind):
                    model = small_seq2seq_model(cross, self_kind, seed=1)
                    vocab = model.config.vocab_size
                    source = random_ids(vocab, 2, (BATCH, SOURCE))
                    target = random_ids(vocab, 3, (BATCH, TARGET))
                    parallel = model(source, target)
                    recurrent, _ = model.decode_recurrent(source, target)
                    self.assertEqual(parallel.shape, (BATCH, TARGET, vocab))
                    torch.testing.assert_close(recurrent, parallel, rtol=0, atol=1e-9)

    @torch.no_grad()
    def test_untied_lm_head_and_position_offset(self):
        model = small_seq2seq_model("srformer", "softmax", seed=4, tie_embeddings=False,
                                    position_offset=2)
        self.assertIn("lm_head.weight", model.state_dict())
        source, target = random_ids(23, 5, (1, 7)), random_ids(23, 6, (1, 8))
        recurrent, _ = model.decode_recurrent(source, target)
        torch.testing.assert_close(recurrent, model(source, target), rtol=0, atol=1e-9)

    @torch.no_grad()
    def test_source_matters_and_rows_are_independent(self):
        # The cross memory actually carries the source, and batch rows do not mix.
        for cross in CROSS_VARIANTS:
            with self.subTest(cross=cross):
                model = small_seq2seq_model(cross, "abc", seed=7)
                source = random_ids(23, 8, (2, SOURCE))
                target = random_ids(23, 9, (1, TARGET)).expand(2, -1)
                both = model(source, target)
                self.assertGreater((both[0] - both[1]).abs().max().item(), 1e-3)
                torch.testing.assert_close(both[1:], model(source[1:], target[1:]),
                                           rtol=0, atol=1e-12)

    @torch.no_grad()
    def test_batch_rows_at_different_positions(self):
        # One step over rows that have decoded different numbers of tokens equals stepping each
        # row alone (srformer's segment and RAF state are per row).
        for cross in ("srformer", "srformer_skip", "abc"):
            with self.subTest(cross=cross):
                model = small_seq2seq_model(cross, "softmax", seed=10)
                source = random_ids(23, 11, (1, SOURCE)).expand(2, -1)
                memory = model.prefill_source(source)
                short, long = random_ids(23, 12, (1, 2)), random_ids(23, 13, (1, 5))
                _, short_state = model.decode_recurrent(source[:1], short)
                _, long_state = model.decode_recurrent(source[:1], long)
                state = [{part: {key: torch.cat([a[part][key], b[part][key]])
                                 for key in a[part]} for part in a}
                         for a, b in zip(short_state, long_state)]
                next_tokens = torch.tensor([4, 11])
                logits, _ = model.step(next_tokens, state, torch.tensor([2, 5]), memory)
                alone_short, _ = model.decode_recurrent(
                    source[:1], torch.cat([short, next_tokens[:1, None]], dim=1))
                alone_long, _ = model.decode_recurrent(
                    source[:1], torch.cat([long, next_tokens[1:, None]], dim=1))
                torch.testing.assert_close(logits[0], alone_short[0, -1], rtol=0, atol=1e-12)
                torch.testing.assert_close(logits[1], alone_long[0, -1], rtol=0, atol=1e-12)

    @torch.no_grad()
    def test_float32_forms_agree(self):
        for cross in ("abc", "luna_conv", "srformer"):
            with self.subTest(cross=cross):
                model = small_seq2seq_model(cross, "rfa_gate", seed=14, dtype=torch.float32)
                source, target = random_ids(23, 15, (2, SOURCE)), random_ids(23, 16, (2, TARGET))
                recurrent, _ = model.decode_recurrent(source, target)
                self.assertEqual(recurrent.dtype, torch.float32)
                torch.testing.assert_close(recurrent, model(source, target), rtol=0, atol=1e-4)

    @torch.no_grad()
    def test_greedy_picks_the_argmax_of_the_teacher_forced_logits(self):
        model = small_seq2seq_model("srformer", "rfa_gate", seed=17)
        source = random_ids(23, 18, (1, SOURCE))
        tokens = model.greedy(source, max_new_tokens=7)[0]
        cfg = model.config
        logits = model(source, torch.tensor([[cfg.decoder_start_id] + tokens]))[0]
        self.assertEqual(logits.argmax(dim=-1).tolist()[:len(tokens)], tokens)
        if len(tokens) < 7:  # stopped early: the next prediction is eos
            self.assertEqual(logits[len(tokens)].argmax().item(), cfg.eos_id)

    def test_source_longer_than_max_source_tokens_is_refused(self):
        model = small_seq2seq_model("softmax")
        with self.assertRaisesRegex(ValueError, "max_source_tokens"):
            model(random_ids(23, 0, (1, 17)), random_ids(23, 1, (1, 3)))


if __name__ == "__main__":
    unittest.main()
