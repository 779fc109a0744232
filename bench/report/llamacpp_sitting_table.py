#!/usr/bin/python3
"""Tables of a llama.cpp sitting's CSV (bench/llamacpp_sitting.sh): per thread count, the median
decode tokens/s of every row at every batch, and each row's median over llama.cpp F16's."""
import collections
import csv
import statistics
import sys

ORDER = ["llama-f16", "llama-q8_0", "softmax-f16", "softmax-int8", "softmax-int8act",
         "abc-f16", "abc-int8", "abc-int8act"]


def main(path):
    tok_s = collections.defaultdict(list)
    rounds = set()
    for row in csv.DictReader(open(path)):
        tok_s[(int(row["threads"]), row["row"], int(row["batch"]))].append(float(row["tok_s"]))
        rounds.add(row["round"])
    threads_list = sorted({t for t, _, _ in tok_s})
    batches = sorted({b for _, _, b in tok_s})
    names = [n for n in ORDER if any(k[1] == n for k in tok_s)]
    header = "| row | " + " | ".join(f"b{b}" for b in batches) + " |"
    rule = "|---|" + "---:|" * len(batches)
    for threads in threads_list:
        median = {(n, b): statistics.median(tok_s[(threads, n, b)])
                  for n in names for b in batches if tok_s[(threads, n, b)]}
        print(f"Decode tokens/s, {threads} thread(s), medians of {len(rounds)} rounds\n")
        print(header)
        print(rule)
        for n in names:
            cells = [f"{median[(n, b)]:,.0f}" if (n, b) in median else "" for b in batches]
            print(f"| {n} | " + " | ".join(cells) + " |")
        print(f"\nRatio to llama.cpp F16, {threads} thread(s)\n")
        print(header)
        print(rule)
        for n in names[1:]:
            cells = [f"{median[(n, b)] / median[('llama-f16', b)]:.2f}"
                     if (n, b) in median and ("llama-f16", b) in median else "" for b in batches]
            print(f"| {n} | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main(sys.argv[1])
