#!/usr/bin/env python3
"""Writes the perplexity table into README.md between the markers
<!-- perplexity-table:begin --> and <!-- perplexity-table:end --> (nothing else is touched).

Input: a JSON-lines file from scripts/evaluate-perplexity.sh, one object per model with keys
  name, model_dir, cpp (slotserve-perplexity's JSON), pytorch (evaluate_pytorch.py's JSON),
  config (config.json), summary (the model's training.json, train.py's summary.json, or null).
Fails when a model's C++ and PyTorch perplexities differ by more than --tolerance (relative), or
when the two did not score the same number of tokens.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

BEGIN = "<!-- perplexity-table:begin -->"
END = "<!-- perplexity-table:end -->"


def abc_control(attention: dict) -> str:
    """abc's memory control (docs/ABC_CONTROLS.md) when it is not the default learned exp one:
    the perplexity table compares controls at an equal number of slots."""
    control = attention.get("control", "learned")
    if control == "learned":
        activation = attention.get("activation", "exp")
        return "" if activation == "exp" else f", learned {activation} control"
    detail = {"linformer": f" over {attention.get('max_positions')} positions",
              "compressive": f", stride {attention.get('stride')}",
              "random": f", seed {attention.get('seed')}"}.get(control, "")
    return f", {control} control{detail}"


def memory_size(attention: dict) -> str:
    kind = attention["kind"]
    if kind == "abc":
        return f"{attention['slots']} slots" + abc_control(attention)
    if kind == "rfa":
        return f"{attention['features']} random features" + (" (gated)" if attention["gate"] else "")
    if kind == "luna":
        return f"{attention['length']} packed length"
    return f"KV cache of {attention['max_context']} tokens"


def human_bytes(n: int) -> str:
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


KIND_ORDER = ("abc", "rfa", "luna", "softmax")  # the papers' kinds, then the baseline


def memory_value(attention: dict) -> int:
    return {"abc": attention.get("slots"), "rfa": attention.get("features"),
            "luna": attention.get("length"), "softmax": attention.get("max_context")}.get(
                attention["kind"]) or 0


def row_order(row: dict) -> tuple:
    """Kinds in KIND_ORDER, each kind's memory sizes ascending (the abc rows make the ablation)."""
    attention = row["config"]["attention"]
    kind = attention["kind"]
    rank = KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)
    return rank, memory_value(attention), row["name"]


def training_note(rows: list) -> str:
    summaries = [row.get("summary") for row in rows]
    steps = {s["steps"] for s in summaries if s}
    if len(steps) == 1 and all(summaries):
        (n,) = steps
        tokens = summaries[0]["tokens_seen"]
        return (f"Every model was trained with the same recipe for the same {n} steps "
                f"({tokens:,} tokens), so the rows compare the attention kinds at an equal "
                f"budget; the abc rows with different slot counts are the memory-size ablation, "
                f"the 32-slot abc rows that name a control the comparison of memory controls "
                f"(docs/ABC_CONTROLS.md). "
                f"Training and limits: `models/trained/MODEL_CARD.md`.")
    return ("Models trained for different numbers of steps do not rank the attention kinds; "
            "`models/trained/MODEL_CARD.md` gives an equal-budget comparison and the ABC slot "
            "ablation.")


def table(rows: list, tolerance: float) -> tuple:
    rows = sorted(rows, key=row_order)
    lines = [
        "| model | attention | memory size | state bytes / request | training steps | "
        "validation ppl | test ppl (C++) | test ppl (PyTorch) | difference |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    problems = []
    for row in rows:
        cpp, ref = row["cpp"], row["pytorch"]
        if cpp["tokens"] != ref["tokens"]:
            problems.append(f"{row['name']}: C++ scored {cpp['tokens']} tokens, PyTorch "
                            f"{ref['tokens']}")
        diff = cpp["perplexity"] / ref["perplexity"] - 1.0
        if abs(diff) > tolerance:
            problems.append(f"{row['name']}: C++ perplexity {cpp['perplexity']:.3f} and PyTorch "
                            f"{ref['perplexity']:.3f} differ by {100 * diff:+.3f}% "
                            f"(allowed ±{100 * tolerance:.2f}%)")
        steps = row["summary"]["steps"] if row.get("summary") else "?"
        valid = f"{row['summary']['valid_ppl']:.2f}" if row.get("summary") else "?"
        state = cpp["state_bytes_per_request"]
        lines.append(
            f"| `{row['model_dir']}` | {row['config']['attention']['kind']} | "
            f"{memory_size(row['config']['attention'])} | {state:,} ({human_bytes(state)}) | "
            f"{steps} | {valid} | {cpp['perplexity']:.2f} | {ref['perplexity']:.2f} | "
            f"{100 * diff:+.3f}% |")
    first = rows[0]["cpp"]
    lines.append("")
    lines.append(
        f"Test split: {first['tokens']:,} tokens (books Ruth, Jonah, Mark, Philippians), scored in "
        f"windows of {first['window']} tokens, each from an empty state (BOS first); C++: "
        f"`slotserve-perplexity` ({first['backend']} backend, state streamed through "
        f"`LanguageModel::Prefill` in chunks), PyTorch: `evaluate_pytorch.py` "
        f"({rows[0]['pytorch']['form']} form, {rows[0]['pytorch']['dtype']}). "
        f"Validation ppl: the whole validation split (Esther, Joel, Ephesians) at the end of "
        f"training, from the model's `training.json`. "
        f"Regenerate with `scripts/evaluate-perplexity.sh`. {training_note(rows)}")
    return "\n".join(lines), problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path)
    parser.add_argument("--readme", type=Path, required=True)
    parser.add_argument("--tolerance", type=float, default=0.005)
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.results.read_text().splitlines() if line.strip()]
    if not rows:
        raise SystemExit(f"evaluate_table: {args.results} holds no results")
    text, problems = table(rows, args.tolerance)
    readme = args.readme.read_text()
    if readme.count(BEGIN) != 1 or readme.count(END) != 1 or readme.index(BEGIN) > readme.index(END):
        raise SystemExit(f"evaluate_table: {args.readme} must hold exactly one {BEGIN} followed "
                         f"by one {END}")
    head, rest = readme.split(BEGIN)
    _, tail = rest.split(END)
    args.readme.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}")
    print(text)
    if problems:
        print("evaluate_table: " + "; ".join(problems), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
