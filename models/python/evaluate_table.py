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


def memory_size(attention: dict) -> str:
    kind = attention["kind"]
    if kind == "abc":
        return f"{attention['slots']} slots"
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


def table(rows: list, tolerance: float) -> str:
    lines = [
        "| model | attention | memory size | state bytes / request | training steps | "
        "test ppl (C++) | test ppl (PyTorch) | difference |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |",
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
        state = cpp["state_bytes_per_request"]
        lines.append(
            f"| `{row['model_dir']}` | {row['config']['attention']['kind']} | "
            f"{memory_size(row['config']['attention'])} | {state:,} ({human_bytes(state)}) | "
            f"{steps} | {cpp['perplexity']:.2f} | {ref['perplexity']:.2f} | "
            f"{100 * diff:+.3f}% |")
    first = rows[0]["cpp"]
    lines.append("")
    lines.append(
        f"Test split: {first['tokens']:,} tokens (books Ruth, Jonah, Mark, Philippians), scored in "
        f"windows of {first['window']} tokens, each from an empty state (BOS first); C++: "
        f"`slotserve-perplexity` ({first['backend']} backend, state streamed through "
        f"`LanguageModel::Prefill` in chunks), PyTorch: `evaluate_pytorch.py` "
        f"({rows[0]['pytorch']['form']} form, {rows[0]['pytorch']['dtype']}). "
        f"Regenerate with `scripts/evaluate-perplexity.sh`. Models trained for different "
        f"numbers of steps do not rank the attention kinds; `models/trained/MODEL_CARD.md` "
        f"gives an equal-budget comparison and the ABC slot ablation.")
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
