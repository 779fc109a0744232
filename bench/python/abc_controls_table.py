#!/usr/bin/env python3
"""The ABC memory-control table of bench/abc_controls.sh: per control, the state bytes per
request and the longest context (from the models suite's CSV) next to decode tokens/s at each
batch size (from the decode suite's CSV), as Markdown on stdout.

  abc_controls_table.py MODELS_CSV DECODE_CSV
"""

import csv
import sys

INT32_MAX = 2**31 - 1


def main(models_csv: str, decode_csv: str) -> int:
    with open(models_csv, newline="") as f:
        models = {row["model"]: row for row in csv.DictReader(f)}
    speeds = {}
    batches = []
    with open(decode_csv, newline="") as f:
        for row in csv.DictReader(f):
            batch = int(row["batch"])
            if batch not in batches:
                batches.append(batch)
            speeds.setdefault(row["model"], {})[batch] = float(row["tokens_per_s"])
    reference = speeds.get("abc-learned-exp", {})
    print("| control | state bytes / request | longest context | "
          + " | ".join(f"b{b} tok/s" for b in batches) + " |")
    print("|---|---:|---:|" + "---:|" * len(batches))
    for name, row in models.items():
        limit = int(row["max_positions"])
        cells = []
        for b in batches:
            speed = speeds.get(name, {}).get(b)
            if speed is None:
                cells.append("–")
            elif name != "abc-learned-exp" and reference.get(b):
                cells.append(f"{speed:,.0f} (×{speed / reference[b]:.2f})")
            else:
                cells.append(f"{speed:,.0f}")
        context = "unbounded" if limit >= INT32_MAX - 16 else f"{limit:,}"
        print(f"| {name.removeprefix('abc-')} | {int(row['state_bytes_per_request']):,} | "
              f"{context} | " + " | ".join(cells) + " |")
    print()
    print("Ratios are against the learned exp control (the default) in the same run.")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
