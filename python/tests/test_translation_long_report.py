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
                          "(25,344 + 101,380) | 19.88 | 22.50 | 19.88 | 499/500 | 5000 |", text)
            self.assertIn("| `es-en-rfa-d32` | (the same) | 800 | 126,724 | 1.52 | 2.64 | 1.52 "
                          "| 500/500 | 3087 |", text)
            for ref in report.EXAMPLES:
                self.assertIn(f"| `es-en-rfa-d32-long` | greedy {ref} | beam {ref} |", text)
            rows = list(csv.DictReader((tmp / "out" / "long.csv").open()))
            self.assertEqual([("es-en-rfa-d32-long", "14000", "19.88", "22.50", "5000")],
                             [(r["model"], r["steps"], r["bleu_greedy_cpp"], r["bleu_beam5_cpp"],
                               r["decode_tokens_per_s"]) for r in rows])
            self.assertIn("<svg", (tmp / "out" / "long.svg").read_text())

    def test_no_long_evaluations_is_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(SystemExit):
                report.main(["--eval", tmp, "--short-csv", str(Path(tmp) / "none.csv"),
                             "--out", str(Path(tmp) / "x")])


if __name__ == "__main__":
    unittest.main()
