#!/usr/bin/env python3
"""BLEU of a Spanish→English translation model (issue 13) as the C++ server translates, next to
the PyTorch reference's greedy translation of the same verses.

For each --model directory: starts the real slotserve-server on a free loopback port (cpu
backend, --threads 1), reads GetModelInfo (state bytes per request: decoder self-attention
state + cross memory), and sends the first --limit verses of the held-out split through the
Python client (slotserve.Client.complete, source = the corpus's Spanish token ids, which end
with eos as a text source does): once greedily (temperature 0) and once with beam search
(--beam, length_penalty --length-penalty). --concurrency requests are in flight at once; decode
speed is the generated tokens of the greedy pass over its wall time (encoder prefill included).
Then, with --pytorch, the reference (slotserve_ref) loads the same model directory (F16 weights
widened to float32) and decodes the same verses greedily (Seq2seqModel.greedy, verses of one
source length in one batch) and with the reference beam search (slotserve_ref/beam_search.py:
the engine's rules, --beam and --length-penalty as the server's), whose text is compared with
the server's beam text verse by verse.

BLEU: corpus BLEU-4 (uniform weights, no smoothing, one reference: the World English Bible
verse) from nltk.translate.bleu_score.corpus_bleu (Debian's python3-nltk), on text tokenised
with the 13a tokenizer of mteval-v13a.pl / sacreBLEU (`tokenize_13a`, written out below),
cased, ×100. The hypothesis is the server's detokenised text (Completion.text); the
PyTorch hypothesis is SentencePiece's decoding of its ids.

Writes one JSON per model into --out (summary + every verse's outputs) and prints the summary.

  PYTHONPATH=python:build/clients/python /usr/bin/python3 python/evaluate_translation.py \
      --server build/server/slotserve-server --model models/trained/es-en-abc-m32 \
      --data build-training/translation --limit 500 --pytorch --out build-training/mt-eval
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

REPO_ROOT = Path(__file__).resolve().parents[1]


# --- BLEU -----------------------------------------------------------------------------------

_13A_RULES = [
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),  # punctuation
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),  # period and comma unless preceded by a digit
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),  # period and comma unless followed by a digit
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),  # dash preceded by a digit
]


def tokenize_13a(line: str) -> List[str]:
    """sacreBLEU's default tokenizer ("13a", mteval-v13a.pl): ASCII punctuation split off,
    periods and commas split unless next to a digit; case kept; non-ASCII characters (curly
    quotes, accented letters) left as they are."""
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = (line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<")
                .replace("&gt;", ">"))
    line = f" {line} "
    for pattern, replacement in _13A_RULES:
        line = pattern.sub(replacement, line)
    return line.split()


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus BLEU-4 ×100 (nltk, no smoothing) of detokenised texts, 13a-tokenised."""
    from nltk.translate.bleu_score import corpus_bleu as nltk_corpus_bleu
    return 100.0 * nltk_corpus_bleu([[tokenize_13a(r)] for r in references],
                                    [tokenize_13a(h) for h in hypotheses])


# --- data -----------------------------------------------------------------------------------

def load_split(data: Path, split: str, limit: int) -> List[Dict]:
    rows = []
    with (data / f"{split}.tsv").open(encoding="utf-8") as tsv, \
            (data / f"{split}.src.ids").open() as ids:
        for line, id_line in zip(tsv, ids):
            book, chapter, verse, spanish, english = line.rstrip("\n").split("\t")
            rows.append({"ref": f"{book} {chapter}:{verse}", "spanish": spanish,
                         "english": english, "source_ids": [int(x) for x in id_line.split()]})
            if len(rows) == limit:
                break
    return rows


# --- the C++ server -------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary: Path, model: Path, threads: int, log: Path):
        self.port = free_port()
        self.log = log.open("w")
        self.process = subprocess.Popen(
            [str(binary), f"--model={model}", f"--listen=127.0.0.1:{self.port}",
             f"--metrics_listen=127.0.0.1:{free_port()}", "--backend=cpu",
             f"--threads={threads}", "--max_slots=64", "--prefix_cache_memory=0"],
            stdout=self.log, stderr=subprocess.STDOUT)

    def client(self, timeout: float = 60.0):
        import slotserve
        deadline = time.time() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"slotserve-server exited with {self.process.returncode}; "
                                   f"see {self.log.name}")
            try:
                client = slotserve.Client(f"127.0.0.1:{self.port}")
                client.info(timeout=2)
                return client
            except Exception:  # not listening yet
                if time.time() > deadline:
                    raise
                time.sleep(0.2)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def translate_all(client, rows, concurrency: int, max_new_tokens: int, **options):
    """-> (completions in row order, wall seconds)."""
    def one(row):
        return client.complete(None, source=row["source_ids"], max_new_tokens=max_new_tokens,
                               timeout=600, **options)
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        results = list(pool.map(one, rows))
    return results, time.perf_counter() - started


# --- the PyTorch reference ------------------------------------------------------------------

def decode_by_source_length(model_dir: Path, rows, batch: int, decode) -> List[List[int]]:
    """Loads the reference (F16 weights widened to float32) and runs decode(model, sources) on
    the verses of one source length at a time, at most `batch` of them together."""
    import torch
    from slotserve_ref.seq2seq_model_dir import load_seq2seq_model_dir
    model = load_seq2seq_model_dir(model_dir, dtype=torch.float32)
    model.eval()
    out: List[List[int]] = [[] for _ in rows]
    by_length: Dict[int, List[int]] = {}
    for i, row in enumerate(rows):
        by_length.setdefault(len(row["source_ids"]), []).append(i)
    for length in sorted(by_length):
        indices = by_length[length]
        for start in range(0, len(indices), batch):
            chunk = indices[start:start + batch]
            for i, ids in zip(chunk, decode(model, [rows[i]["source_ids"] for i in chunk])):
                out[i] = ids
    return out


def pytorch_greedy(model_dir: Path, rows, max_new_tokens: int, batch: int) -> List[List[int]]:
    import torch
    return decode_by_source_length(
        model_dir, rows, batch,
        lambda model, sources: model.greedy(torch.tensor(sources, dtype=torch.long),
                                            max_new_tokens))


def pytorch_beam(model_dir: Path, rows, max_new_tokens: int, width: int, length_penalty: float,
                 batch: int) -> List[List[int]]:
    """The reference beam search (slotserve_ref/beam_search.py, the engine's rules)."""
    from slotserve_ref.beam_search import beam_search_batch
    return decode_by_source_length(
        model_dir, rows, batch,
        lambda model, sources: beam_search_batch(model, sources, width, max_new_tokens,
                                                 length_penalty))


def add_pytorch_beam_columns(args, model_dir: Path, rows, summary: Dict, verses) -> None:
    """The reference's beam BLEU, and on how many verses its text equals the server's."""
    import sentencepiece
    sp = sentencepiece.SentencePieceProcessor(model_file=str(model_dir / "tokenizer.model"))
    started = time.perf_counter()
    ids = pytorch_beam(model_dir, rows, args.max_new_tokens, args.beam, args.length_penalty,
                       args.pytorch_batch)
    summary["pytorch_beam_seconds"] = time.perf_counter() - started
    texts = [sp.decode(one).strip() for one in ids]
    summary["bleu_pytorch_beam"] = corpus_bleu(texts, [r["english"] for r in rows])
    summary["pytorch_beam_identical_texts"] = sum(
        1 for v, text in zip(verses, texts) if v["beam"] == text)
    for v, text in zip(verses, texts):
        v["pytorch_beam"] = text


# --- one model ------------------------------------------------------------------------------

def measure_speed(args, model_dir: Path, rows) -> Dict:
    """Only the greedy pass (--speed-only), for a decode speed taken with nothing else of the
    evaluation running: -> {model}.speed.json. With --speed-passes N the pass runs N times on
    one server and the median tokens/s is kept (a pass of 500 verses takes ~3 s, short enough
    for a neighbour's burst to move one pass by 10%)."""
    args.out.mkdir(parents=True, exist_ok=True)
    server = Server(args.server, model_dir, args.threads, args.out / f"{model_dir.name}.server.log")
    passes = []
    try:
        client = server.client()
        for _ in range(max(1, args.speed_passes)):
            greedy, seconds = translate_all(client, rows, args.concurrency, args.max_new_tokens,
                                            temperature=0)
            passes.append((sum(len(c.token_ids) for c in greedy), seconds))
        client.close()
    finally:
        server.stop()
    tokens, seconds = sorted(passes, key=lambda p: p[0] / p[1])[len(passes) // 2]
    summary = {"model": model_dir.name, "verses": len(rows), "greedy_generated_tokens": tokens,
               "greedy_seconds": seconds, "greedy_tokens_per_second": tokens / seconds,
               "speed_passes": len(passes),
               "greedy_tokens_per_second_each_pass": [t / s for t, s in passes],
               "concurrency": args.concurrency, "server_threads": args.threads}
    (args.out / f"{model_dir.name}.speed.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def add_pytorch(args, model_dir: Path, rows) -> Dict:
    """--pytorch-only: adds the PyTorch greedy and beam columns to an earlier evaluation's JSON
    (the C++ outputs are kept, not rerun)."""
    import sentencepiece
    sp = sentencepiece.SentencePieceProcessor(model_file=str(model_dir / "tokenizer.model"))
    path = args.out / f"{model_dir.name}.json"
    data = json.loads(path.read_text())
    summary, verses = data["summary"], data["verses"]
    if [v["ref"] for v in verses] != [row["ref"] for row in rows]:
        raise SystemExit(f"{path}: evaluated other verses than --split/--limit select")
    eos = json.loads((model_dir / "config.json").read_text())["eos_id"]
    started = time.perf_counter()
    pytorch_ids = pytorch_greedy(model_dir, rows, args.max_new_tokens, args.pytorch_batch)
    summary["pytorch_seconds"] = time.perf_counter() - started
    pytorch_texts = [sp.decode(ids).strip() for ids in pytorch_ids]
    summary["bleu_pytorch_greedy"] = corpus_bleu(pytorch_texts, [r["english"] for r in rows])
    summary["pytorch_identical_token_ids"] = sum(
        1 for v, ids in zip(verses, pytorch_ids) if [t for t in v["greedy_ids"] if t != eos] == ids)
    for v, text in zip(verses, pytorch_texts):
        v["pytorch_greedy"] = text
    if summary.get("beam_width") != args.beam or summary.get("length_penalty") != args.length_penalty:
        raise SystemExit(f"{path}: the server's beam search had width {summary.get('beam_width')}"
                         f" and length penalty {summary.get('length_penalty')}, not --beam "
                         f"{args.beam} --length-penalty {args.length_penalty}")
    add_pytorch_beam_columns(args, model_dir, rows, summary, verses)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    return summary


def evaluate_model(args, model_dir: Path, rows) -> Dict:
    import sentencepiece
    sp = sentencepiece.SentencePieceProcessor(model_file=str(model_dir / "tokenizer.model"))
    references = [row["english"] for row in rows]
    args.out.mkdir(parents=True, exist_ok=True)
    server = Server(args.server, model_dir, args.threads, args.out / f"{model_dir.name}.server.log")
    try:
        client = server.client()
        info = client.info()
        greedy, greedy_seconds = translate_all(client, rows, args.concurrency,
                                               args.max_new_tokens, temperature=0)
        beam, beam_seconds = translate_all(client, rows, args.concurrency, args.max_new_tokens,
                                           beam_width=args.beam,
                                           length_penalty=args.length_penalty)
        client.close()
    finally:
        server.stop()
    greedy_texts = [c.text.strip() for c in greedy]
    beam_texts = [c.text.strip() for c in beam]
    greedy_tokens = sum(len(c.token_ids) for c in greedy)
    beam_tokens = sum(len(c.token_ids) for c in beam)
    # The server's text against SentencePiece's decoding of the server's ids.
    detok_mismatches = sum(1 for c in greedy if c.text.strip() != sp.decode(
        [t for t in c.token_ids if t != info.eos_id]).strip())
    summary = {
        "model": model_dir.name,
        "cross_attention": json.loads((model_dir / "config.json").read_text())["cross_attention"],
        "verses": len(rows),
        "state_bytes_per_request": info.state_bytes_per_request,
        "decoder_state_bytes_per_request": info.decoder_state_bytes_per_request,
        "cross_memory_bytes_per_request": info.cross_memory_bytes_per_request,
        "backend": info.backend,
        "bleu_greedy": corpus_bleu(greedy_texts, references),
        "bleu_beam": corpus_bleu(beam_texts, references),
        "beam_width": args.beam,
        "length_penalty": args.length_penalty,
        "greedy_generated_tokens": greedy_tokens,
        "greedy_seconds": greedy_seconds,
        "greedy_tokens_per_second": greedy_tokens / greedy_seconds,
        "beam_generated_tokens": beam_tokens,
        "beam_seconds": beam_seconds,
        "concurrency": args.concurrency,
        "server_threads": args.threads,
        "greedy_detokenisation_mismatches": detok_mismatches,
    }
    pytorch_texts = None
    if args.pytorch:
        started = time.perf_counter()
        pytorch_ids = pytorch_greedy(model_dir, rows, args.max_new_tokens, args.pytorch_batch)
        summary["pytorch_seconds"] = time.perf_counter() - started
        pytorch_texts = [sp.decode(ids).strip() for ids in pytorch_ids]
        summary["bleu_pytorch_greedy"] = corpus_bleu(pytorch_texts, references)
        summary["pytorch_identical_token_ids"] = sum(
            1 for c, ids in zip(greedy, pytorch_ids)
            if [t for t in c.token_ids if t != info.eos_id] == ids)
    verses = []
    for i, row in enumerate(rows):
        entry = {"ref": row["ref"], "spanish": row["spanish"], "english": row["english"],
                 "greedy": greedy_texts[i], "greedy_ids": greedy[i].token_ids,
                 "beam": beam_texts[i]}
        if pytorch_texts is not None:
            entry["pytorch_greedy"] = pytorch_texts[i]
        verses.append(entry)
    if args.pytorch:
        add_pytorch_beam_columns(args, model_dir, rows, summary, verses)
    (args.out / f"{model_dir.name}.json").write_text(
        json.dumps({"summary": summary, "verses": verses}, ensure_ascii=False, indent=1) + "\n")
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", type=Path, required=True, help="slotserve-server binary")
    parser.add_argument("--model", type=Path, action="append", required=True,
                        help="model directory (repeatable)")
    parser.add_argument("--data", type=Path, default=REPO_ROOT / "build-training/translation")
    parser.add_argument("--split", default="test")
    parser.add_argument("--limit", type=int, default=500, help="first N verses of the split")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--length-penalty", type=float, default=1.0)
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1, help="server --threads")
    parser.add_argument("--pytorch", action="store_true",
                        help="also the PyTorch reference's greedy and beam BLEU")
    parser.add_argument("--pytorch-batch", type=int, default=32)
    parser.add_argument("--pytorch-only", action="store_true",
                        help="add the PyTorch greedy and beam BLEU to an existing MODEL.json "
                             "in --out")
    parser.add_argument("--speed-only", action="store_true",
                        help="only time the greedy pass (writes MODEL.speed.json)")
    parser.add_argument("--speed-passes", type=int, default=1,
                        help="with --speed-only: greedy passes, the median kept")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "build-training/mt-eval")
    args = parser.parse_args(argv)
    import torch
    torch.set_num_threads(1)
    rows = load_split(args.data, args.split, args.limit)
    for model_dir in args.model:
        run = (measure_speed if args.speed_only else add_pytorch if args.pytorch_only
               else evaluate_model)
        summary = run(args, model_dir, rows)
        print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
