#!/usr/bin/env python3
"""Turns evaluate_translation.py's JSONs of the models trained at the longer budget (the `-long`
models of scripts/train-translation-models.sh) into bench/results/translation_long.md, .csv and
.svg: each long model beside its 800-step counterpart (read from translation.csv), the same
example verses for all, and BLEU against state bytes per request.

  /usr/bin/python3 python/translation_long_report.py --eval build-training/mt-eval \
      --short-csv bench/results/translation.csv --out bench/results/translation_long
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
from pathlib import Path
from typing import Dict, List

from translation_report import ORDER, describe, examples, fmt, row_cells, svg_plot

LONG = [name + "-long" for name in ORDER]
EXAMPLES = ["Mark 1:2", "Mark 1:9", "Jonah 3:1", "Ruth 1:16", "Mark 2:27", "Mark 1:1"]
# The papers' ablations (issue 13 item 4), each a group of long models compared with each other
# and with the softmax baseline's greedy BLEU.
BASELINE = "es-en-softmax-long"
ABLATION_GROUPS = [
    ("ABC cross memory: 8, 16, 32 and 64 slots",
     ["es-en-abc-m8-long", "es-en-abc-m16-long", "es-en-abc-m32-long", "es-en-abc-m64-long"]),
    ("SRformer segment size (8, 16, 64) against segmented attention alone (no recurrence)",
     ["es-en-srformer-s8-long", "es-en-srformer-s16-long", "es-en-srformer-s64-long",
      "es-en-srformer-s16-segonly-long"]),
    ("Luna with and without the ConvLuna filter",
     ["es-en-luna-l32-long", "es-en-convluna-l32-long"]),
]


def load_long(eval_dir: Path, models_dir: Path) -> List[Dict]:
    rows = []
    for name in LONG:
        path = eval_dir / f"{name}.json"
        if not path.exists():
            continue
        row = json.loads(path.read_text())["summary"]
        speed = eval_dir / f"{name}.speed.json"
        if speed.exists():
            timed = json.loads(speed.read_text())
            row["greedy_tokens_per_second"] = timed["greedy_tokens_per_second"]
            row["speed_passes"] = timed.get("speed_passes", 1)
        training = json.loads((models_dir / name / "training.json").read_text())
        row["steps"] = training["steps"]
        rows.append(row)
    return rows


def evaluated_refs(eval_dir: Path, name: str) -> set:
    return {v["ref"] for v in json.loads((eval_dir / f"{name}.json").read_text())["verses"]}


def load_short(path: Path) -> Dict[str, Dict[str, str]]:
    with path.open() as f:
        return {row["model"]: row for row in csv.DictReader(f)}


def short_beam_cells(row: Dict[str, str]) -> str:
    """The reference beam search's two cells of a short model's CSV row (empty if it has none)."""
    bleu, same = row.get("bleu_pytorch_beam") or "", row.get("pytorch_beam_identical_texts") or ""
    return (f"{float(bleu):.2f} | " if bleu else " | ") + (f"{same}/{row['verses']} | "
                                                          if same else " | ")


def table(rows: List[Dict], short: Dict[str, Dict[str, str]]) -> List[str]:
    lines = ["| model | cross attention | steps | bytes / request (decoder + cross) | BLEU greedy "
             "(C++) | BLEU beam 5 (C++) | BLEU greedy (PyTorch) | same ids as PyTorch | "
             "BLEU beam 5 (PyTorch) | same beam text as PyTorch | decode tok/s |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        cells = row_cells(r)
        cells.insert(2, f"{r['steps']:,}")
        lines.append("| " + " | ".join(cells) + " |")
        counterpart = short.get(r["model"].removesuffix("-long"))
        if counterpart:
            lines.append(
                f"| `{counterpart['model']}` | (the same) | 800 | "
                f"{int(counterpart['state_bytes_per_request']):,} | "
                f"{float(counterpart['bleu_greedy']):.2f} | {float(counterpart['bleu_beam']):.2f} | "
                f"{float(counterpart['bleu_pytorch_greedy']):.2f} | "
                f"{counterpart['pytorch_identical_token_ids']}/{counterpart['verses']} | "
                f"{short_beam_cells(counterpart)}"
                f"{float(counterpart['greedy_tokens_per_second']):.0f} |")
    return lines


def ablations(rows: List[Dict]) -> List[str]:
    """One table per ablation group: the group's long models in their order, each with its share
    of the softmax baseline's greedy BLEU, and the models not evaluated yet named below it."""
    by_name = {r["model"]: r for r in rows}
    baseline = by_name.get(BASELINE)
    lines = ["## Ablations at this budget", ""]
    if baseline is not None:
        lines += [f"Share of softmax: greedy BLEU over `{BASELINE}`'s "
                  f"({baseline['bleu_greedy']:.2f}).", ""]
    for title, names in ABLATION_GROUPS:
        present = [by_name[name] for name in names if name in by_name]
        missing = [name for name in names if name not in by_name]
        lines += [f"### {title}", ""]
        if present:
            lines += ["| model | cross attention | bytes / request | BLEU greedy (C++) | "
                      "BLEU beam 5 (C++) | share of softmax | decode tok/s |",
                      "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
            for r in present:
                share = (f"{100 * r['bleu_greedy'] / baseline['bleu_greedy']:.0f}%"
                         if baseline is not None and baseline["bleu_greedy"] > 0 else "")
                lines.append(f"| `{r['model']}` | {describe(r)} | "
                             f"{r['state_bytes_per_request']:,} | {r['bleu_greedy']:.2f} | "
                             f"{r['bleu_beam']:.2f} | {share} | "
                             f"{r['greedy_tokens_per_second']:.0f} |")
        if missing:
            lines += ([""] if present else []) + [
                "Not trained at this budget yet: " + ", ".join(f"`{n}`" for n in missing) + "."]
        lines.append("")
    return lines


def write_csv(rows: List[Dict], path: Path) -> None:
    keys = ["model", "cross_attention", "steps", "bytes_per_request", "decoder_bytes",
            "cross_bytes", "bleu_greedy_cpp", "bleu_beam5_cpp", "bleu_greedy_pytorch",
            "same_ids_as_pytorch", "bleu_beam5_pytorch", "same_beam_text_as_pytorch",
            "decode_tokens_per_s"]
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(keys)
        for r in rows:
            w.writerow([r["model"], r["cross_attention"]["kind"], r["steps"],
                        r["state_bytes_per_request"], r["decoder_state_bytes_per_request"],
                        r["cross_memory_bytes_per_request"], f"{r['bleu_greedy']:.2f}",
                        f"{r['bleu_beam']:.2f}", fmt(r.get("bleu_pytorch_greedy")),
                        r.get("pytorch_identical_token_ids", ""), fmt(r.get("bleu_pytorch_beam")),
                        r.get("pytorch_beam_identical_texts", ""),
                        f"{r['greedy_tokens_per_second']:.0f}"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval", type=Path, required=True, help="evaluate_translation.py --out")
    parser.add_argument("--short-csv", type=Path, required=True,
                        help="translation_report.py's CSV of the 800-step models")
    parser.add_argument("--models", type=Path, default=Path("models/trained"),
                        help="where the model directories (training.json) are")
    parser.add_argument("--out", type=Path, required=True, help="path prefix (.md .csv .svg)")
    args = parser.parse_args(argv)
    rows = load_long(args.eval, args.models)
    if not rows:
        raise SystemExit(f"translation_long_report: no -long evaluations in {args.eval}")
    short = load_short(args.short_csv)
    first = rows[0]
    passes = max(r.get("speed_passes", 1) for r in rows)
    timing = ("a separate greedy pass (`--speed-only`)" if passes == 1 else
              f"separate greedy passes, the median of {passes} (`--speed-only --speed-passes "
              f"{passes}`)")
    today = datetime.date.today().isoformat()
    names = ", ".join(f"`{r['model']}`" for r in rows)
    lines = ["# The translation models trained 17.5× longer", "",
             f"Written by `python/translation_long_report.py` ({today}) from "
             "`python/evaluate_translation.py`'s output for " + names + ". BLEU does not depend "
             "on when a model is evaluated (greedy and beam search are deterministic; "
             "re-evaluating gives the same digits); the decode speeds were measured in one "
             "sitting. The protocol of `translation.md`: the first "
             f"{first['verses']} verses of the held-out test split (Ruth 1:1 – Mark 10:21), corpus "
             "BLEU-4 ×100 with nltk `corpus_bleu`, 13a tokens, cased, one reference (WEB); beam "
             f"{first['beam_width']} with length_penalty {first['length_penalty']}; server "
             f"`--backend cpu --threads {first['server_threads']}`, {first['concurrency']} "
             f"requests in flight; decode tok/s from {timing}, "
             "one model after another. Every model: the recipe of "
             "`models/trained/TRANSLATION_CARD.md` with 14,000 steps (warm-up 400) instead of "
             "800 (7.8 epochs instead of 0.44). Beside each, its 800-step counterpart from "
             "`translation.csv` (whose decode tok/s come from that earlier sitting: compare "
             "speeds within one sitting only; the short CSV has no reference beam columns). "
             "The PyTorch columns: the reference (F16 weights widened to float32) decoding the "
             "same verses greedily and with its beam search (`python/slotserve_ref/"
             "beam_search.py`, the engine's rules); \"same\" counts the verses whose greedy "
             "token ids, or beam-5 text, equal the C++ server's. Plot: "
             "`translation_long.svg`.", ""]
    lines += table(rows, short)
    lines += [""] + ablations(rows)
    lines += ["## Examples (held-out)", ""]
    refs = [evaluated_refs(args.eval, r["model"]) for r in rows]
    for ref in EXAMPLES:
        if all(ref in evaluated for evaluated in refs):  # --limit may have cut it
            lines += [""] + examples(args.eval, [r["model"] for r in rows], ref)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    write_csv(rows, args.out.with_suffix(".csv"))
    svg_plot(rows, args.out.with_suffix(".svg"))
    print("\n".join(lines[:len(rows) * 2 + 6]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
