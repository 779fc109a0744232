#!/usr/bin/python3
"""The table of bench/http_vs_grpc.sh: medians over the rounds of each protocol's rows
(http_vs_grpc_{grpc,http}.csv as slotserve-bench-loadgen writes them), and HTTP / gRPC.

    http_vs_grpc_table.py RESULTS_DIR "machine note"
"""

import csv
import pathlib
import statistics
import sys

COLUMNS = [  # (csv column, label, higher is better)
    ("steady_tokens_per_s", "steady tokens/s", True),
    ("overall_tokens_per_s", "overall tokens/s", True),
    ("ttft_ms_p50", "TTFT p50 ms", False),
    ("ttft_ms_p90", "TTFT p90 ms", False),
    ("itl_ms_p50", "ITL p50 ms", False),
    ("itl_ms_p90", "ITL p90 ms", False),
]
TARGET = 0.90  # issue 17: HTTP streaming throughput >= 90% of gRPC's


def medians(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if any(int(row["failed"]) for row in rows):
        sys.exit(f"{path}: some requests failed")
    return rows, {column: statistics.median(float(row[column]) for row in rows)
                  for column, _, _ in COLUMNS}


def main():
    results, note = pathlib.Path(sys.argv[1]), sys.argv[2]
    grpc_rows, grpc = medians(results / "http_vs_grpc_grpc.csv")
    _, http = medians(results / "http_vs_grpc_http.csv")
    first = grpc_rows[0]
    print(f"HTTP (/v1/completions, server-sent events) vs gRPC (Generate), "
          f"{first['requests']} concurrent streams, {first['prompt_tokens']} prompt + "
          f"{first['new_tokens']} generated tokens each, model {first['model']} "
          f"({first['kind']}); medians of {len(grpc_rows)} rounds; {note}\n")
    print("| metric | gRPC | HTTP | HTTP / gRPC |")
    print("| --- | ---: | ---: | ---: |")
    for column, label, _ in COLUMNS:
        ratio = http[column] / grpc[column] if grpc[column] else float("nan")
        print(f"| {label} | {grpc[column]:.1f} | {http[column]:.1f} | {ratio:.3f} |")
    ratio = http["steady_tokens_per_s"] / grpc["steady_tokens_per_s"]
    verdict = "met" if ratio >= TARGET else "NOT met"
    print(f"\nTarget (HTTP streaming throughput >= {TARGET:.0%} of gRPC's, steady tokens/s): "
          f"{verdict} ({ratio:.1%}).")


if __name__ == "__main__":
    main()
