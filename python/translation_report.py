#!/usr/bin/env python3
"""Turns the per-model JSONs of evaluate_translation.py into bench/results/translation.md, .csv
and .svg (BLEU against state bytes per request; the SVG is written here, no plotting library).

  /usr/bin/python3 python/translation_report.py --eval build-training/mt-eval \
      --out bench/results/translation
"""

from __future__ import annotations

import argparse
import csv
import html
import json
import math
from pathlib import Path
from typing import Dict, List

MAIN = ["es-en-softmax", "es-en-abc-m32", "es-en-rfa-d32", "es-en-luna-l32",
        "es-en-convluna-l32", "es-en-srformer-s16"]
ABLATIONS = ["es-en-abc-m8", "es-en-abc-m16", "es-en-abc-m64", "es-en-srformer-s8",
             "es-en-srformer-s64", "es-en-srformer-s16-segonly"]
ORDER = MAIN + ABLATIONS


def describe(summary: Dict) -> str:
    c = summary["cross_attention"]
    kind = c["kind"]
    if kind == "abc":
        return f"abc, {c['slots']} slots"
    if kind == "rfa":
        return f"rfa, {c['features']} features"
    if kind == "luna":
        if c.get("filter"):
            f = c["filter"]
            return (f"ConvLuna: luna {c['length']}, τ {c['temperature']}, {f['op']} "
                    f"κ{f['kernel']} σ{f['stride']}")
        return f"luna, length {c['length']}"
    if kind == "srformer":
        extra = (", segmented only (no recurrence)"
                 if summary["model"].removesuffix("-long").endswith("segonly") else "")
        return f"srformer, segment {c['segment']}, q {c['target_length']}{extra}"
    return kind


def load(eval_dir: Path) -> List[Dict]:
    rows = []
    for name in ORDER:
        path = eval_dir / f"{name}.json"
        if path.exists():
            row = json.loads(path.read_text())["summary"]
            speed = eval_dir / f"{name}.speed.json"
            if speed.exists():  # a later greedy pass timed alone (--speed-only)
                timed = json.loads(speed.read_text())
                row["greedy_tokens_per_second"] = timed["greedy_tokens_per_second"]
                row["speed_pass"] = "alone"
            rows.append(row)
    return rows


def fmt(value, digits=2):
    return "" if value is None else f"{value:.{digits}f}"


def write_csv(rows: List[Dict], path: Path) -> None:
    keys = ["model", "cross", "verses", "state_bytes_per_request",
            "decoder_state_bytes_per_request", "cross_memory_bytes_per_request",
            "bleu_greedy", "bleu_beam", "bleu_pytorch_greedy", "pytorch_identical_token_ids",
            "bleu_pytorch_beam", "pytorch_beam_identical_texts", "greedy_tokens_per_second", "greedy_generated_tokens", "greedy_seconds",
            "beam_seconds", "concurrency", "server_threads"]
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(keys)
        for r in rows:
            w.writerow([describe(r) if k == "cross" else r.get(k, "") for k in keys])


def row_cells(r: Dict) -> List[str]:
    """One evaluated model's cells in the order of table()'s columns."""
    same = (f"{r['pytorch_identical_token_ids']}/{r['verses']}"
            if "pytorch_identical_token_ids" in r else "")  # evaluated without --pytorch
    same_beam = (f"{r['pytorch_beam_identical_texts']}/{r['verses']}"
                 if "pytorch_beam_identical_texts" in r else "")
    return [f"`{r['model']}`", describe(r),
            f"{r['state_bytes_per_request']:,} ({r['decoder_state_bytes_per_request']:,} + "
            f"{r['cross_memory_bytes_per_request']:,})", fmt(r["bleu_greedy"]),
            fmt(r["bleu_beam"]), fmt(r.get("bleu_pytorch_greedy")), same,
            fmt(r.get("bleu_pytorch_beam")), same_beam, f"{r['greedy_tokens_per_second']:.0f}"]


def table(rows: List[Dict]) -> List[str]:
    lines = ["| model | cross attention | bytes / request (decoder + cross) | BLEU greedy (C++) "
             "| BLEU beam 5 (C++) | BLEU greedy (PyTorch) | same ids as PyTorch "
             "| BLEU beam 5 (PyTorch) | same beam text as PyTorch | decode tok/s |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    lines += ["| " + " | ".join(row_cells(r)) + " |" for r in rows]
    return lines


def svg_plot(rows: List[Dict], path: Path) -> None:
    """BLEU (beam 5 filled, greedy hollow) against state bytes per request, log x."""
    width, height, left, right, top, bottom = 860, 520, 70, 250, 40, 60
    xs = [r["state_bytes_per_request"] for r in rows]
    ys = [v for r in rows for v in (r["bleu_greedy"], r["bleu_beam"])]
    x0, x1 = math.log10(min(xs)) - 0.05, math.log10(max(xs)) + 0.05
    y1 = max(1.0, max(ys) * 1.15)
    pw, ph = width - left - right, height - top - bottom

    def px(x):
        return left + (math.log10(x) - x0) / (x1 - x0) * pw

    def py(y):
        return top + ph - y / y1 * ph

    palette = ["#000000", "#1f77b4", "#d62728", "#2ca02c", "#17becf", "#ff7f0e", "#9ecae1",
               "#6baed6", "#08519c", "#fdae6b", "#a63603", "#8c564b"]

    def colour(r):  # one colour per kind of model (ABC sizes in blues, SRformer in oranges);
        name = r["model"].removesuffix("-long")  # a long model takes its short one's colour
        return palette[ORDER.index(name) % len(palette)] if name in ORDER else "#777777"

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left + pw / 2}" y="22" text-anchor="middle" font-size="14">'
           f'Spanish→English (held-out books): BLEU against state bytes per request</text>',
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>']
    # y grid
    step = 1 if y1 <= 10 else 2 if y1 <= 20 else 5
    y = 0.0
    while y <= y1:
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{py(y):.1f}" y2="{py(y):.1f}" '
                   f'stroke="#ddd"/><text x="{left - 6}" y="{py(y) + 4:.1f}" '
                   f'text-anchor="end">{y:g}</text>')
        y += step
    # x grid: 1-2-5 ticks
    for exponent in range(int(math.floor(x0)), int(math.ceil(x1)) + 1):
        for m in (1, 2, 5):
            v = m * 10 ** exponent
            if x0 <= math.log10(v) <= x1:
                label = f"{v / 1000:g} kB" if v < 10 ** 6 else f"{v / 10 ** 6:g} MB"
                out.append(f'<line x1="{px(v):.1f}" x2="{px(v):.1f}" y1="{top}" '
                           f'y2="{top + ph}" stroke="#eee"/><text x="{px(v):.1f}" '
                           f'y="{top + ph + 16}" text-anchor="middle">{label}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 18}" text-anchor="middle">state bytes '
               f'per request (decoder self-attention + cross memory), log scale</text>')
    out.append(f'<text x="18" y="{top + ph / 2}" text-anchor="middle" '
               f'transform="rotate(-90 18 {top + ph / 2})">corpus BLEU (13a, nltk)</text>')
    same_size: Dict[int, List[str]] = {}
    for r in rows:
        same_size.setdefault(r["state_bytes_per_request"], []).append(r["model"])
    out.append(f'<text x="{left + pw / 2}" y="{top - 6}" text-anchor="middle" fill="#555">'
               f'models of equal size are spread sideways by 10 px</text>')
    for r in rows:
        group = same_size[r["state_bytes_per_request"]]
        offset = (group.index(r["model"]) - (len(group) - 1) / 2) * 10
        x, c = px(r["state_bytes_per_request"]) + offset, colour(r)
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{py(r["bleu_greedy"]):.1f}" '
                   f'y2="{py(r["bleu_beam"]):.1f}" stroke="{c}"/>')
        out.append(f'<circle cx="{x:.1f}" cy="{py(r["bleu_beam"]):.1f}" r="5" fill="{c}">'
                   f'<title>{html.escape(r["model"])} beam 5: {r["bleu_beam"]:.2f}</title>'
                   f'</circle>')
        out.append(f'<circle cx="{x:.1f}" cy="{py(r["bleu_greedy"]):.1f}" r="4" fill="white" '
                   f'stroke="{c}" stroke-width="1.5"><title>{html.escape(r["model"])} greedy: '
                   f'{r["bleu_greedy"]:.2f}</title></circle>')
    # legend: one line per model
    lx, ly = left + pw + 16, top + 8
    out.append(f'<text x="{lx}" y="{ly}" font-weight="bold">● beam 5   ○ greedy</text>')
    for i, r in enumerate(rows):
        yy = ly + 20 + i * 18
        out.append(f'<circle cx="{lx + 5}" cy="{yy - 4}" r="5" fill="{colour(r)}"/>'
                   f'<text x="{lx + 16}" y="{yy}">{html.escape(r["model"][6:])} '
                   f'({r["bleu_beam"]:.1f})</text>')
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")


def examples(eval_dir: Path, names: List[str], ref: str) -> List[str]:
    """One verse's C++ outputs (greedy and beam), one row per model."""
    lines, source, english = [], None, None
    for name in names:
        path = eval_dir / f"{name}.json"
        if not path.exists():
            continue
        verse = next(v for v in json.loads(path.read_text())["verses"] if v["ref"] == ref)
        source, english = verse["spanish"], verse["english"]
        lines.append(f"| `{name}` | {verse['greedy']} | {verse['beam']} |")
    return ([f"{ref}: Spanish *{source}* — WEB reference *{english}*", "",
             "| model | C++ greedy | C++ beam 5 |", "| --- | --- | --- |"] + lines)


def fill_card(card: Path, block: List[str]) -> None:
    begin, end = "<!-- results:begin -->", "<!-- results:end -->"
    text = card.read_text()
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    card.write_text(head + begin + "\n" + "\n".join(block) + "\n" + end + tail)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval", type=Path, required=True, help="evaluate_translation.py --out")
    parser.add_argument("--out", type=Path, required=True, help="path prefix (.md .csv .svg)")
    parser.add_argument("--card", type=Path, help="a model card whose results block (between "
                        "<!-- results:begin/end -->) gets the tables and example verses")
    parser.add_argument("--example", action="append", default=None,
                        help="verse reference for the card's examples (default Mark 1:1)")
    args = parser.parse_args(argv)
    rows = load(args.eval)
    if not rows:
        raise SystemExit(f"translation_report: no evaluations in {args.eval}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_csv(rows, args.out.with_suffix(".csv"))
    svg_plot(rows, args.out.with_suffix(".svg"))
    main_rows = [r for r in rows if r["model"] in MAIN]
    ablation_rows = [r for r in rows if r["model"] in ABLATIONS or r["model"] in
                     ("es-en-abc-m32", "es-en-srformer-s16", "es-en-luna-l32",
                      "es-en-convluna-l32")]
    first = rows[0]
    timed_alone = all(r.get("speed_pass") == "alone" for r in rows)
    lines = [f"Verses: the first {first['verses']} of the held-out test split (Ruth 1:1 – "
             f"Mark 10:21); BLEU: corpus BLEU-4 ×100, nltk `corpus_bleu`, 13a tokens, cased, "
             f"one reference (WEB); beam {first['beam_width']} with length_penalty "
             f"{first['length_penalty']}; bytes / request: GetModelInfo "
             f"(decoder self-attention state + cross memory, float32). Decode tok/s: generated "
             f"tokens of a greedy pass over the 500 verses over its wall time, "
             f"{first['concurrency']} requests in flight, server `--backend cpu --threads "
             f"{first['server_threads']}`, encoder prefill included"
             + ("; timed in a separate pass, one model after another (`--speed-only`)."
                if timed_alone else "; timed during the BLEU pass.") +
             " Same ids as PyTorch: verses whose C++ greedy token ids equal the PyTorch "
             "reference's (which loads the F16 weights as float32). Same beam text as PyTorch: "
             "verses whose C++ beam-5 translation equals the reference beam search's "
             "(`python/slotserve_ref/beam_search.py`, the engine's rules; empty where the "
             "model was evaluated before it existed).", "",
             "### Main models", ""] + table(main_rows)
    lines += ["", "### Ablations", ""] + table(
        sorted(ablation_rows, key=lambda r: (r["cross_attention"]["kind"],
                                             r["state_bytes_per_request"])))
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    if args.card is not None:
        block = ["## Results", "", "Written by `python/translation_report.py` from "
                 "`scripts/evaluate-translation-models.sh` (also in "
                 "`bench/results/translation.md`, `.csv`; plot: "
                 "`bench/results/translation.svg`).", ""] + lines
        for ref in args.example or ["Mark 1:1"]:
            block += ["", "### Example (held-out)", ""] + examples(
                args.eval, [r["model"] for r in rows], ref)
        fill_card(args.card, block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
