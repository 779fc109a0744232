"""Request-state benchmarks (issue 14, item 6; docs/ARCHITECTURE.md "Request state") through a real
slotserve-server and
its gRPC API, one server per committed model under models/trained/:

  (a) time to first token with a shared prefix, cold (never seen) vs cached (its prefix state
      held by --prefix-cache-memory), per attention kind; target: cached <= 10% of cold for
      the bounded kinds;
  (b) a 20-turn conversation's per-turn prefill cost (time to first token of each turn) with a
      session vs resending the whole history (prefix cache off, so resending pays in full);
      target: bounded kinds flat within 10% from turn 2 to 20, softmax grows ("growth": the
      median of the last quarter of turns over the median of turns 2..5, minus 1);
  (c) bytes per session (the ExportSession blob) per kind;
  (d) ExportSession + ImportSession round trip of one session (two gRPC calls on loopback).

Each figure is the median of --repeats runs. Prints a Markdown table and writes OUT.csv
(bench/results/request_state.md quotes the table with the conclusions).

  PYTHONPATH=build/clients/python /usr/bin/python3 bench/python/request_state_bench.py \
      --server build/server/slotserve-server --out bench/results/request_state
"""

import argparse
import csv
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import grpc

from slotserve.v1 import slotserve_pb2 as pb
from slotserve.v1 import slotserve_pb2_grpc as pb_grpc

MODELS = ["kjv-abc-m32", "kjv-rfa-d32", "kjv-luna-l32", "kjv-softmax-c512"]
BOUNDED = {"abc", "rfa", "luna"}


class Server:
    """slotserve-server on loopback, free ports; stopped with SIGTERM."""

    def __init__(self, binary, model_dir, flags):
        self.process = subprocess.Popen(
            [binary, f"--model={model_dir}", "--listen=127.0.0.1:0",
             "--metrics-listen=127.0.0.1:0", "--threads=1", "--max-slots=4", *flags],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        log = []
        for line in self.process.stdout:
            log.append(line)
            match = re.search(r"listening on ([0-9.]+:[0-9]+)", line)
            if match:
                self.address = match.group(1)
                break
        else:
            raise RuntimeError(f"{binary} did not start:\n{''.join(log)}")
        # softmax's state (its KV rows) is several MiB: above gRPC's default 4 MiB messages.
        self.channel = grpc.insecure_channel(self.address, options=[
            ("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)])
        self.stub = pb_grpc.SlotServeStub(self.channel)
        self.stub.GetModelInfo(pb.GetModelInfoRequest(), timeout=10)

    def stop(self):
        self.channel.close()
        self.process.terminate()
        self.process.wait(timeout=60)


def request(ids, keep=False, handle="", new_tokens=1):
    r = pb.GenerateRequest()
    r.token_ids.ids.extend(ids)
    r.sampling.temperature = 0.0
    r.stopping.max_new_tokens = new_tokens
    r.stopping.ignore_eos = True
    r.session.keep = keep
    r.session.handle = handle
    return r


def timed_generate(stub, req):
    """(seconds to the first token message, finished message, generated ids)."""
    start = time.perf_counter()
    first = None
    finished = None
    ids = []
    for message in stub.Generate(req, timeout=600):
        if message.WhichOneof("event") == "finished":
            finished = message.finished
        else:
            if first is None:
                first = time.perf_counter() - start
            ids.extend(message.tokens.ids)
    return first, finished, ids


def random_ids(rng, n, vocab=3900):
    return [rng.randrange(4, vocab) for _ in range(n)]


def bench_prefix(server, prefix_len, repeats, rng):
    cold, cached = [], []
    for _ in range(repeats):
        prefix = random_ids(rng, prefix_len)
        t, _, _ = timed_generate(server.stub, request(prefix + random_ids(rng, 8)))
        cold.append(t)
        t, _, _ = timed_generate(server.stub, request(prefix + random_ids(rng, 8)))
        cached.append(t)
    return statistics.median(cold), statistics.median(cached)


def bench_turns(server, turns, turn_tokens, new_tokens, repeats, rng):
    """Per-turn medians: (with session, resending the history)."""
    session = [[] for _ in range(turns)]
    resend = [[] for _ in range(turns)]
    for _ in range(repeats):
        handle, history = "", []
        for turn in range(turns):
            prompt = random_ids(rng, turn_tokens)
            t, finished, ids = timed_generate(
                server.stub, request(prompt, keep=True, handle=handle, new_tokens=new_tokens))
            session[turn].append(t)
            handle = finished.session_handle
            t, _, _ = timed_generate(server.stub, request(history + prompt, new_tokens=1))
            resend[turn].append(t)
            history += prompt + list(ids)
    return [statistics.median(s) for s in session], [statistics.median(r) for r in resend]


def bench_transfer(server, repeats, rng):
    _, finished, _ = timed_generate(server.stub, request(random_ids(rng, 64), keep=True))
    handle = finished.session_handle
    times, size = [], 0
    for _ in range(max(repeats, 20)):
        start = time.perf_counter()
        blob = server.stub.ExportSession(pb.ExportSessionRequest(handle=handle), timeout=10).state
        size = len(blob)
        try:
            server.stub.ImportSession(pb.ImportSessionRequest(state=blob), timeout=10)
        except grpc.RpcError as error:  # the server's own message-size limit
            print(f"import of {size} bytes refused: {error.details()}", file=sys.stderr)
            return size, float("nan")
        times.append(time.perf_counter() - start)
    return size, statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--models-dir", default="models/trained")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--prefix", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--turn-tokens", type=int, default=16)
    parser.add_argument("--turn-new-tokens", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", required=True, help="path prefix: writes OUT.csv")
    args = parser.parse_args()
    rng = random.Random(14)
    rows = []
    for name in args.models.split(","):
        model_dir = Path(args.models_dir) / name
        kind = name.split("-")[1]
        # softmax-c512 holds at most 512 positions: its prefix and conversation are cut to fit.
        short = kind == "softmax"
        prefix_len = min(args.prefix, 480) if short else args.prefix
        turn_tokens = args.turn_tokens
        turns = args.turns if not short else min(args.turns, 480 // (turn_tokens + args.turn_new_tokens))
        server = Server(args.server, model_dir, ["--prefix-cache-memory=256MiB"])
        try:
            cold, cached = bench_prefix(server, prefix_len, args.repeats, rng)
            size, transfer = bench_transfer(server, args.repeats, rng)
        finally:
            server.stop()
        server = Server(args.server, model_dir, ["--prefix-cache-memory=0"])
        try:
            with_session, resending = bench_turns(server, turns, turn_tokens,
                                                  args.turn_new_tokens, args.repeats, rng)
        finally:
            server.stop()
        later = with_session[1:]
        rows.append({
            "model": name, "kind": kind, "prefix_tokens": prefix_len,
            "ttft_cold_ms": cold * 1e3, "ttft_cached_ms": cached * 1e3,
            "cached_over_cold": cached / cold,
            "turns": turns,
            "session_turn2_ms": with_session[1] * 1e3, "session_last_ms": with_session[-1] * 1e3,
            # Flat = the last turns cost what the early ones did: median of the last quarter of
            # turns over the median of turns 2..5 (single turns are noisy at ~10 ms).
            "session_growth": statistics.median(later[-max(1, len(later) // 4):])
            / statistics.median(later[:4]) - 1,
            "resend_growth": statistics.median(resending[1:][-max(1, len(later) // 4):])
            / statistics.median(resending[1:5]) - 1,
            "resend_turn2_ms": resending[1] * 1e3, "resend_last_ms": resending[-1] * 1e3,
            "session_bytes": size, "export_import_ms": transfer * 1e3,
            "per_turn_session_ms": " ".join(f"{t * 1e3:.2f}" for t in with_session),
            "per_turn_resend_ms": " ".join(f"{t * 1e3:.2f}" for t in resending),
        })
        print(rows[-1], flush=True)
    out = Path(args.out)
    with open(out.with_suffix(".csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    lines = [
        "| model | kind | prefix | TTFT cold ms | TTFT cached ms | cached/cold | turns | "
        "session turn 2 ms | session last ms | session growth | resend turn 2 ms | "
        "resend last ms | resend growth | bytes/session | export+import ms |",
        "|" + "---|" * 15,
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['kind']} | {r['prefix_tokens']} | {r['ttft_cold_ms']:.2f} | "
            f"{r['ttft_cached_ms']:.2f} | {r['cached_over_cold']:.1%} | {r['turns']} | "
            f"{r['session_turn2_ms']:.2f} | {r['session_last_ms']:.2f} | "
            f"{r['session_growth']:+.1%} | {r['resend_turn2_ms']:.2f} | "
            f"{r['resend_last_ms']:.2f} | {r['resend_growth']:+.1%} | "
            f"{r['session_bytes']} | {r['export_import_ms']:.3f} |")
    table = "\n".join(lines)
    print(table)


if __name__ == "__main__":
    sys.exit(main())
