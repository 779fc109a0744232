"""translation_long_report.py: a long model's row beside its 800-step counterpart from the short
CSV, the example verses of every long model, and the CSV it writes."""

import csv
import json
import tempfile
import unittest
from pathlib import Path

import translation_long_report as report


def summary(name, greedy, beam):
    return {"model": name, "cross_attention": {"kind": "rfa", "features": 32}, "verses": 500,
            "state_bytes_per_request": 126724, "decoder_state_bytes_per_request": 25344,
            "cross_memory_bytes_per_request": 101380, "bleu_greedy": greedy, "bleu_beam": beam,
            "bleu_pytorch_greedy": greedy, "pytorch_identical_token_ids": 499,
            "bleu_pytorch_beam": beam, "pytorch_beam_identical_texts": 498,
            "greedy_tokens_per_second": 4321.4, "beam_width": 5, "length_penalty": 1.0,
            "server_threads": 1, "concurrency": 8}


class LongReportTest(unittest.TestCase):
    def test_rows_counterparts_examples_and_csv(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "eval").mkdir()
            verses = [{"ref": ref, "spanish": f"es {ref}", "english": f"en {ref}",
                       "greedy": f"greedy {ref}", "beam": f"beam {ref}"}
                      for ref in report.EXAMPLES]
            (tmp / "eval" / "es-en-rfa-d32-long.json").write_text(
                json.dumps({"summary": summary("es-en-rfa-d32-long", 19.876, 22.5),
                            "verses": verses}))
            (tmp / "eval" / "es-en-rfa-d32-long.speed.json").write_text(
                json.dumps({"greedy_tokens_per_second": 5000.2}))
            (tmp / "models" / "es-en-rfa-d32-long").mkdir(parents=True)
            (tmp / "models" / "es-en-rfa-d32-long" / "training.json").write_text(
                json.dumps({"steps": 14000}))
            with (tmp / "short.csv").open("w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["model", "state_bytes_per_request", "bleu_greedy", "bleu_beam",
                            "bleu_pytorch_greedy", "pytorch_identical_token_ids", "verses",
                            "greedy_tokens_per_second"])
                w.writerow(["es-en-rfa-d32", "126724", "1.52", "2.64", "1.52", "500", "500",
                            "3087"])
            self.assertEqual(0, report.main(
                ["--eval", str(tmp / "eval"), "--short-csv", str(tmp / "short.csv"),
                 "--models", str(tmp / "models"), "--out", str(tmp / "out" / "long")]))
            text = (tmp / "out" / "long.md").read_text()
            self.assertIn("| `es-en-rfa-d32-long` | rfa, 32 features | 14,000 | 126,724 "
                          "(25,344 + 101,380) | 19.88 | 22.50 | 19.88 | 499/500 | 22.50 | "
                          "498/500 | 5000 |", text)
            # The short CSV has no reference beam columns: its cells stay empty.
            self.assertIn("| `es-en-rfa-d32` | (the same) | 800 | 126,724 | 1.52 | 2.64 | 1.52 "
                          "| 500/500 |  |  | 3087 |", text)
            for ref in report.EXAMPLES:
                self.assertIn(f"| `es-en-rfa-d32-long` | greedy {ref} | beam {ref} |", text)
            rows = list(csv.DictReader((tmp / "out" / "long.csv").open()))
            self.assertEqual([("es-en-rfa-d32-long", "14000", "19.88", "22.50", "22.50", "498",
                               "5000")],
                             [(r["model"], r["steps"], r["bleu_greedy_cpp"], r["bleu_beam5_cpp"],
                               r["bleu_beam5_pytorch"], r["same_beam_text_as_pytorch"],
                               r["decode_tokens_per_s"]) for r in rows])
            self.assertIn("<svg", (tmp / "out" / "long.svg").read_text())

    def test_ablation_tables_share_of_softmax_and_the_models_still_missing(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "eval").mkdir()
            evaluated = {"es-en-softmax-long": ({"kind": "softmax"}, 24.0, 26.0),
                         "es-en-abc-m8-long": ({"kind": "abc", "slots": 8}, 18.0, 20.5),
                         "es-en-luna-l32-long": ({"kind": "luna", "length": 32}, 21.0, 23.0),
                         "es-en-convluna-l32-long": (
                             {"kind": "luna", "length": 32, "temperature": 0.5,
                              "filter": {"op": "conv", "kernel": 4, "stride": 4}}, 19.2, 21.1)}
            for name, (cross, greedy, beam) in evaluated.items():
                row = summary(name, greedy, beam)
                row["cross_attention"] = cross
                (tmp / "eval" / f"{name}.json").write_text(json.dumps({"summary": row,
                                                                       "verses": []}))
                (tmp / "models" / name).mkdir(parents=True)
                (tmp / "models" / name / "training.json").write_text(json.dumps({"steps": 14000}))
            (tmp / "short.csv").write_text("model\n")
            self.assertEqual(0, report.main(
                ["--eval", str(tmp / "eval"), "--short-csv", str(tmp / "short.csv"),
                 "--models", str(tmp / "models"), "--out", str(tmp / "long")]))
            text = (tmp / "long.md").read_text()
            # 18 / 24 = 75%, 21 / 24 = 88%, 19.2 / 24 = 80%.
            self.assertIn("| `es-en-abc-m8-long` | abc, 8 slots | 126,724 | 18.00 | 20.50 | 75% "
                          "| 4321 |", text)
            self.assertIn("| 21.00 | 23.00 | 88% |", text)
            self.assertIn("| 19.20 | 21.10 | 80% |", text)
            self.assertIn("Not trained at this budget yet: `es-en-abc-m16-long`, "
                          "`es-en-abc-m32-long`, `es-en-abc-m64-long`.", text)
            self.assertIn("Not trained at this budget yet: `es-en-srformer-s8-long`, "
                          "`es-en-srformer-s16-long`, `es-en-srformer-s64-long`, "
                          "`es-en-srformer-s16-segonly-long`.", text)
            self.assertNotIn("Not trained at this budget yet: `es-en-luna", text)

    def test_no_long_evaluations_is_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(SystemExit):
                report.main(["--eval", tmp, "--short-csv", str(Path(tmp) / "none.csv"),
                             "--out", str(Path(tmp) / "x")])


if __name__ == "__main__":
    unittest.main()
