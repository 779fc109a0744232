"""slotserve-perplexity on encoder–decoder models (--source-ids/--target-ids), as a user runs it:
a good run scores every target id and each target's end, counted here from the files
themselves; --max-tokens stops at a pair boundary; bad files, a model of the other family and
mixed flags end with a non-zero exit and one line on stderr that names the problem.
(Whether the scores are right is python/evaluate_seq2seq_compare.py's check, against the
reference.)

    seq2seq_perplexity_tool_test.py TOOL SEQ2SEQ_MODEL DECODER_ONLY_MODEL SOURCE_IDS TARGET_IDS
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print(f"FAIL: {message}")


def run(tool, *args):
    return subprocess.run([tool, *map(str, args)], capture_output=True, text=True, timeout=120)


def expect_error(tool, args, status, needles, what):
    done = run(tool, *args)
    lines = done.stderr.strip().splitlines()
    check(done.returncode == status,
          f"{what}: exit status {done.returncode}, expected {status} ({done.stderr.strip()})")
    check(len(lines) == 1, f"{what}: expected one line on stderr, got {lines}")
    for needle in needles:
        check(needle in done.stderr, f"{what}: stderr lacks \"{needle}\": {done.stderr.strip()}")
    check(done.stdout == "", f"{what}: printed on stdout: {done.stdout!r}")


def read_lines(path):
    return [[int(t) for t in line.split()] for line in Path(path).read_text().splitlines()]


def main():
    tool, seq2seq_model, decoder_model, source_ids, target_ids = sys.argv[1:6]
    targets = read_lines(target_ids)
    config = json.loads((Path(seq2seq_model) / "config.json").read_text())
    max_source = config["encoder"]["max_source_tokens"]
    vocab = config["vocab_size"]

    # Every pair: each target's ids plus its end.
    done = run(tool, "--model", seq2seq_model, "--source-ids", source_ids, "--target-ids",
               target_ids)
    check(done.returncode == 0, f"good run failed: {done.stderr.strip()}")
    result = json.loads(done.stdout)
    check(result["pairs"] == len(targets), f"pairs {result['pairs']}, expected {len(targets)}")
    expected_tokens = sum(len(t) + 1 for t in targets)
    check(result["tokens"] == expected_tokens,
          f"tokens {result['tokens']}, expected {expected_tokens}")
    check(result["cross_attention"] == config["cross_attention"]["kind"],
          f"cross_attention {result['cross_attention']}, config says "
          f"{config['cross_attention']['kind']}")
    check(1.0 < result["perplexity"] < vocab, f"perplexity {result['perplexity']} out of range")

    # --max-tokens: whole pairs only, as many as fit (at least one).
    limit = len(targets[0]) + 1 + len(targets[1]) + 1 + len(targets[2])  # 2 pairs fit, not 3
    done = run(tool, "--model", seq2seq_model, "--source-ids", source_ids, "--target-ids",
               target_ids, "--max-tokens", limit)
    partial = json.loads(done.stdout) if done.returncode == 0 else {}
    check(partial.get("pairs") == 2 and partial.get("tokens") == limit - len(targets[2]),
          f"--max-tokens {limit}: {partial or done.stderr.strip()}, expected 2 pairs")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        sources = Path(source_ids).read_text().splitlines()
        short = tmp / "short.tgt.ids"
        short.write_text("\n".join(Path(target_ids).read_text().splitlines()[:-1]) + "\n")
        expect_error(tool, ["--model", seq2seq_model, "--source-ids", source_ids, "--target-ids",
                            short], 1, [f"has {len(sources)} lines", str(short),
                                        f"has {len(sources) - 1}"], "unequal line counts")
        gap = tmp / "gap.src.ids"
        gap.write_text(sources[0] + "\n\n" + "\n".join(sources[2:]) + "\n")
        expect_error(tool, ["--model", seq2seq_model, "--source-ids", gap, "--target-ids",
                            target_ids], 1, [f"{gap}:2: empty line"], "an empty line")
        word = tmp / "word.tgt.ids"
        word.write_text("5 six 7\n")
        one_source = tmp / "one.src.ids"
        one_source.write_text(sources[0] + "\n")
        expect_error(tool, ["--model", seq2seq_model, "--source-ids", one_source, "--target-ids",
                            word], 1, [f"{word}:1", "\"six\""], "a word among the ids")
        long_source = tmp / "long.src.ids"
        long_source.write_text(" ".join(["5"] * (max_source + 1)) + "\n")
        one_target = tmp / "one.tgt.ids"
        one_target.write_text("5 6 7\n")
        expect_error(tool, ["--model", seq2seq_model, "--source-ids", long_source,
                            "--target-ids", one_target], 1,
                     ["pair 1", str(max_source + 1), str(max_source)], "a source too long")
        outside = tmp / "outside.tgt.ids"
        outside.write_text(f"5 {vocab} 7\n")
        expect_error(tool, ["--model", seq2seq_model, "--source-ids", one_source, "--target-ids",
                            outside], 1, ["pair 1", f"target token {vocab}"],
                     "a target token outside the vocabulary")

    expect_error(tool, ["--model", decoder_model, "--source-ids", source_ids, "--target-ids",
                        target_ids], 1, ["decoder-only", "--ids"], "a decoder-only model")
    expect_error(tool, ["--model", seq2seq_model, "--ids", target_ids, "--window", "64"], 1,
                 ["encoder-decoder model", "--source-ids"], "--ids on an encoder-decoder model")
    expect_error(tool, ["--model", seq2seq_model, "--source-ids", source_ids, "--target-ids",
                        target_ids, "--window", "64"], 2, ["do not go together"], "mixed flags")
    expect_error(tool, ["--model", seq2seq_model, "--source-ids", source_ids], 2,
                 ["missing required flag --target-ids"], "no targets")

    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("slotserve-perplexity on encoder-decoder models: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
