"""The fla reference's two forms agree (issue 20): token-by-token steps, one whole prefill,
prefill in chunks, and any mix continuing from a state, for every small variant (float64,
≤ 1e-9). Also that every option actually changes the output, so agreement is not vacuous."""

import unittest

import torch

from fla_small import VARIANTS, small_model

TOLERANCE = 1e-9


def tokens(n=17, vocab=29, seed=5):
    return torch.randint(0, vocab, (n,), generator=torch.Generator().manual_seed(seed))


class FormsAgreeTest(unittest.TestCase):
    def for_each_model(self, seed, check):
        """check(model) for every small variant with random weights from `seed`, each in its
        own subTest so that one failing variant does not hide the others."""
        for name in VARIANTS:
            with self.subTest(name):
                check(small_model(name, seed=seed))

    def assert_same(self, a, b, message=None):
        self.assertLess((a - b).abs().max().item(), TOLERANCE, message)

    def test_step_equals_whole_and_chunked_prefill(self):
        ids = tokens()
        def check(model):
            stepped, _ = model.forward_recurrent(ids)
            for chunk in (None, 1, 4, 5):
                self.assert_same(model.prefill(ids, chunk=chunk)[0], stepped, f"chunk {chunk}")
        self.for_each_model(0, check)

    def test_prefill_then_step_equals_longer_prefill(self):
        ids = tokens(12)
        def check(model):
            full, _ = model.prefill(ids)
            _, state = model.prefill(ids[:7], chunk=3)
            logits, state = model.step(int(ids[7]), state)
            self.assert_same(logits, full[7])
            rest, state = model.prefill(ids[8:], state)
            self.assert_same(rest, full[8:])
            self.assertEqual(state["position"], 12)
        self.for_each_model(3, check)

    def test_states_after_both_forms_predict_the_same_next_token(self):
        ids = tokens(9)
        def check(model):
            _, by_steps = model.forward_recurrent(ids)
            _, by_prefill = model.prefill(ids, chunk=4)
            self.assert_same(model.step(3, by_steps)[0], model.step(3, by_prefill)[0])
        self.for_each_model(4, check)

    def test_context_and_rope_matter(self):
        """A change at token 1 reaches the last logits (the state carries context)."""
        ids = tokens(10)
        altered = ids.clone()
        altered[1] = (altered[1] + 1) % 29
        def check(model):
            moved = model.prefill(altered)[0][-1] - model.prefill(ids)[0][-1]
            self.assertGreater(moved.abs().max().item(), 1e-4)
        self.for_each_model(6, check)
        # RoPE scores depend on relative positions only, so a shifted start changes nothing,
        # but turning RoPE off (same weights) does.
        with_rope = small_model("abc_rope_clamp")
        state = with_rope.new_state()
        state["position"] = 5
        self.assertLess((with_rope.prefill(ids, state)[0] - with_rope.prefill(ids)[0]).abs().max().item(),
                        1e-12)
        without = small_model("abc_rope_clamp", use_rope=False)
        self.assertGreater((without.prefill(ids)[0] - with_rope.prefill(ids)[0]).abs().max().item(),
                           1e-3)


if __name__ == "__main__":
    unittest.main()
