"""evaluate_table.py: row order (kinds, then memory size: the abc rows form the ablation), the
training note that depends on whether every model had the same budget, and the C++ vs PyTorch
tolerance check that makes scripts/evaluate-perplexity.sh fail."""

import unittest

import evaluate_table

ATTENTIONS = {
    "kjv-abc-m8": {"kind": "abc", "slots": 8},
    "kjv-abc-m64": {"kind": "abc", "slots": 64},
    "kjv-softmax-c512": {"kind": "softmax", "max_context": 512},
    "kjv-abc-m16": {"kind": "abc", "slots": 16},
    "kjv-luna-l32": {"kind": "luna", "length": 32, "activation": "softplus", "tie_kv": False},
    "kjv-rfa-d32": {"kind": "rfa", "features": 32, "gate": True},
}


def row(name, steps=1500, cpp_ppl=50.0, ref_ppl=50.0):
    measured = {"tokens": 27587, "window": 256, "state_bytes_per_request": 1024,
                "backend": "cpu"}
    return {"name": name, "model_dir": f"models/trained/{name}",
            "cpp": measured | {"perplexity": cpp_ppl},
            "pytorch": {"tokens": 27587, "perplexity": ref_ppl, "form": "recurrent",
                        "dtype": "float32"},
            "config": {"attention": ATTENTIONS[name]},
            "summary": {"steps": steps, "tokens_seen": steps * 1024, "valid_ppl": 60.0}}


class EvaluateTableTest(unittest.TestCase):
    def test_kinds_in_order_and_abc_by_slots(self):
        text, problems = evaluate_table.table([row(name) for name in ATTENTIONS], 0.005)
        self.assertEqual(problems, [])
        body = [line for line in text.splitlines() if line.startswith("| `")]
        self.assertEqual([line.split("`")[1].split("/")[-1] for line in body],
                         ["kjv-abc-m8", "kjv-abc-m16", "kjv-abc-m64", "kjv-rfa-d32",
                          "kjv-luna-l32", "kjv-softmax-c512"])

    def test_abc_controls_are_named_next_to_their_slots(self):
        self.assertEqual(evaluate_table.memory_size({"kind": "abc", "slots": 32}), "32 slots")
        self.assertEqual(evaluate_table.memory_size({"kind": "abc", "slots": 32,
                                                     "control": "window"}),
                         "32 slots, window control")
        self.assertEqual(evaluate_table.memory_size({"kind": "abc", "slots": 32,
                                                     "control": "learned",
                                                     "activation": "relu"}),
                         "32 slots, learned relu control")
        self.assertEqual(evaluate_table.memory_size({"kind": "abc", "slots": 32,
                                                     "control": "compressive", "stride": 8}),
                         "32 slots, compressive control, stride 8")

    def test_equal_budget_note_only_when_every_model_had_the_same_steps(self):
        same, _ = evaluate_table.table([row("kjv-abc-m8"), row("kjv-rfa-d32")], 0.005)
        self.assertIn("same 1500 steps (1,536,000 tokens)", same)
        mixed, _ = evaluate_table.table([row("kjv-abc-m8"), row("kjv-rfa-d32", steps=900)], 0.005)
        self.assertNotIn("same 1500 steps", mixed)
        self.assertIn("do not rank the attention kinds", mixed)

    def test_disagreement_beyond_tolerance_is_a_problem(self):
        _, problems = evaluate_table.table([row("kjv-abc-m8", cpp_ppl=50.2, ref_ppl=50.0)], 0.005)
        self.assertEqual(problems, [])
        _, problems = evaluate_table.table([row("kjv-abc-m8", cpp_ppl=50.3, ref_ppl=50.0)], 0.005)
        self.assertEqual(len(problems), 1)
        self.assertIn("differ by +0.600%", problems[0])


if __name__ == "__main__":
    unittest.main()
