#!/usr/bin/python3
"""HTTP soak run (not CI): the OpenAI-compatible API of one real server under a hostile mix.

  bench/http_soak.py [--minutes 20] [--window-minutes 5] [--clients 8] [--model DIR] [--build DIR]

bench/soak.py holds a server for a long time through gRPC; this does the same through the
HTTP API, whose requests fork and fan out inside the server: a batch of prompts is one engine
request per prompt, n and best_of fork choices from one prefill, beam search forks beams, and
streams may be dropped by the client at any chunk.

1. Starts slotserve-server (bench/soak.py's Server) with --http-listen on loopback, few slots
   and a short queue, so that some requests are refused with 429.
2. --clients threads send requests back to back for --minutes, each drawn from the mix below
   with its own seed, over plain http.client connections:
   completions (n 1-3, logprobs, echo, logit_bias), batches of 2-4 prompts (text and token
   ids), best_of > n, beam search, streamed completions and chats of which 40% are dropped by
   the client after a random number of chunks, chats, /tokenize + /detokenize round trips, and
   bad requests that must be refused with 400 and an OpenAI error body naming the parameter.
   Every answer is checked: choice count and indices, finish reasons, a stream's [DONE].
3. Every --sample-seconds: the server's resident memory and its slot, running and queued
   gauges.
   With logprobs, a choice's tokens must concatenate to its text.
   An encoder-decoder model (config "format": "slotserve-seq2seq") gets its own mix instead,
   every request with a Spanish source: bench/http_soak_seq2seq_mix.py.
4. At the end: every request answered, no slot held, nothing running or queued, and SIGTERM
   ends the server with exit status 0.

Writes a Markdown report (per window: answers by outcome, p50/p99 latency of whole answers,
RSS) and a CSV of the samples. Exit status 1 on an unexpected answer, a leaked slot or an
unclean exit.
"""

import argparse
import http.client
import json
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from http_soak_seq2seq_mix import Seq2seqMix  # noqa: E402
from soak import ROOT, Server, percentile  # noqa: E402

OUTCOMES = ("ok", "dropped", "overloaded", "refused_as_meant")
PROMPTS = ("In the beginning", "And God said", "The LORD is my shepherd", "Blessed are the",
           "And it came to pass", "Thus saith the LORD", "Let there be light",
           "For God so loved the world")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--window-minutes", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--sample-seconds", type=float, default=10.0)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--model", default=os.path.join(ROOT, "models/trained/kjv-abc-m32"))
    parser.add_argument("--max-slots", type=int, default=8)
    parser.add_argument("--max-queued", type=int, default=12)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench/results/http_soak.md"))
    parser.add_argument("--csv", default=os.path.join(ROOT, "bench/results/http_soak_samples.csv"))
    return parser.parse_args()


class Record:
    """What the clients saw, shared between their threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.answers = []  # (time, kind, outcome, seconds)
        self.unexpected = []  # (time, description)
        self.samples = []  # (time, rss MiB, slots used, running, queued)

    def answer(self, kind, outcome, seconds):
        with self.lock:
            self.answers.append((time.monotonic(), kind, outcome, seconds))

    def fail(self, text):
        with self.lock:
            self.unexpected.append((time.monotonic(), text[:400]))


class Unexpected(Exception):
    pass


def sampling(rng, vocab_size):
    """Random sampling options: temperature, seed, and now and then logprobs and a bias."""
    body = {"temperature": rng.choice([0.0, 0.7, 1.0]), "seed": rng.randrange(1 << 30),
            "max_tokens": rng.randint(4, 48)}
    if rng.random() < 0.3:
        body["logprobs"] = rng.randint(0, 3)
    if rng.random() < 0.25:
        ids = rng.sample(range(3, vocab_size), rng.randint(1, 4))
        body["logit_bias"] = {str(i): rng.uniform(-100, 100) for i in ids}
    return body


def request_plan(rng, vocab_size):
    """(kind, path, body, expected choices, streamed, chunks before a drop or None)."""
    roll = rng.random()
    prompt = rng.choice(PROMPTS)
    if roll < 0.20:
        n = rng.randint(1, 3)
        body = {"prompt": prompt, "n": n, **sampling(rng, vocab_size)}
        if rng.random() < 0.15:
            body.update(echo=True, logprobs=body.get("logprobs", 0))
        return "completion", "/v1/completions", body, n, False, None
    if roll < 0.32:
        prompts = [rng.choice(PROMPTS) if rng.random() < 0.6 else
                   [rng.randrange(3, vocab_size) for _ in range(rng.randint(1, 12))]
                   for _ in range(rng.randint(2, 4))]
        n = rng.randint(1, 2)
        body = {"prompt": prompts, "n": n, **sampling(rng, vocab_size)}
        return "batch", "/v1/completions", body, n * len(prompts), False, None
    if roll < 0.40:
        n = rng.randint(1, 2)
        body = {"prompt": prompt, "n": n, "best_of": rng.randint(n + 1, 4),
                **sampling(rng, vocab_size)}
        body["temperature"] = 1.0
        return "best_of", "/v1/completions", body, n, False, None
    if roll < 0.45:
        body = {"prompt": prompt, "use_beam_search": True, "best_of": rng.randint(2, 4),
                "n": 2, "max_tokens": rng.randint(4, 24), "temperature": 0.0}
        return "beam", "/v1/completions", body, 2, False, None
    if roll < 0.65:
        n = rng.randint(1, 2)
        body = {"prompt": prompt, "n": n, "stream": True, **sampling(rng, vocab_size)}
        drop = rng.randint(1, 20) if rng.random() < 0.4 else None
        return "stream", "/v1/completions", body, n, True, drop
    if roll < 0.80:
        stream = rng.random() < 0.5
        body = {"messages": [{"role": "user", "content": prompt}], "stream": stream,
                **sampling(rng, vocab_size)}
        body.pop("logprobs", None)
        drop = rng.randint(1, 20) if stream and rng.random() < 0.4 else None
        return "chat", "/v1/chat/completions", body, 1, stream, drop
    if roll < 0.90:
        return "tokenize", "/tokenize", {"prompt": prompt, "add_special_tokens": False}, 0, \
            False, None
    bad = rng.choice([
        ("logit_bias", {"prompt": prompt, "logit_bias": {"7": 500}}),
        ("logit_bias", {"prompt": prompt, "logit_bias": {str(vocab_size + 5): 1}}),
        ("n", {"prompt": prompt, "n": 0}),
        ("best_of", {"prompt": prompt, "n": 3, "best_of": 2}),
        ("prompt", {"prompt": [[1, 2], [vocab_size + 9]]}),
        ("temperature", {"prompt": prompt, "temperature": -1}),
        ("max_tokens", {"prompt": prompt, "max_tokens": -3}),
    ])
    return "bad:" + bad[0], "/v1/completions", bad[1], 0, False, None


def check_tokens_spell_text(kind, choice):
    """Completions logprobs: the tokens concatenate to the choice's text (echo included). Not
    checked where U+FFFD appears: a byte-fallback piece of a character split over tokens reads
    as U+FFFD alone, and a prompt of random ids may end inside a character that the generated
    text then closes as U+FFFD (engine/incremental_detokenizer.h)."""
    logprobs = choice.get("logprobs")
    if kind == "chat" or not logprobs or "\ufffd" in choice["text"] or \
            any("\ufffd" in t for t in logprobs["tokens"]):
        return
    if "".join(logprobs["tokens"]) != choice["text"]:
        raise Unexpected(f"{kind}: logprob tokens {logprobs['tokens'][:8]} do not spell the "
                         f"text {choice['text'][:80]!r}")


def check_whole(kind, body, answer, expected_choices):
    if kind == "tokenize":
        if answer["count"] != len(answer["tokens"]):
            raise Unexpected(f"tokenize count {answer['count']} != {len(answer['tokens'])}")
        return
    choices = answer.get("choices", [])
    if sorted(c["index"] for c in choices) != list(range(expected_choices)):
        raise Unexpected(f"{kind}: choice indices {[c['index'] for c in choices]}, "
                         f"expected {expected_choices}")
    for choice in choices:
        if choice.get("finish_reason") not in ("stop", "length"):
            raise Unexpected(f"{kind}: finish_reason {choice.get('finish_reason')}")
        if body.get("logprobs") is not None and kind != "chat" and choice.get("logprobs") is None:
            raise Unexpected(f"{kind}: logprobs asked for and missing")
        check_tokens_spell_text(kind, choice)
        if kind == "score":  # every token of the given translation scored, then eos (forced)
            scores = choice["logprobs"]["token_logprobs"]
            if choice["finish_reason"] != "stop" or any(s is None for s in scores):
                raise Unexpected(f"score: finish {choice['finish_reason']}, scores {scores}")


def read_stream(kind, response, expected_choices, drop_after):
    """Reads server-sent events; returns False when the client dropped the stream."""
    chunks, finished, done = 0, set(), False
    merged = {}  # by choice index: its text and logprob tokens, chunk after chunk
    while True:
        line = response.readline()
        if not line:
            break
        line = line.strip()
        if not line.startswith(b"data: "):
            continue
        data = line[6:]
        if data == b"[DONE]":
            done = True
            break
        event = json.loads(data)
        if "error" in event:
            raise Unexpected(f"stream error event {data[:200]!r}")
        for choice in event.get("choices", []):
            if choice.get("finish_reason") is not None:
                finished.add(choice["index"])
            whole = merged.setdefault(choice["index"], {"text": "", "logprobs": None})
            whole["text"] += choice.get("text", "")
            if choice.get("logprobs"):
                whole["logprobs"] = whole["logprobs"] or {"tokens": []}
                whole["logprobs"]["tokens"] += choice["logprobs"]["tokens"]
        chunks += 1
        if drop_after is not None and chunks >= drop_after:
            return False
    if not done or finished != set(range(expected_choices)):
        raise Unexpected(f"stream ended without [DONE] or a finish for every choice "
                         f"(done {done}, finished {sorted(finished)})")
    for choice in merged.values():
        check_tokens_spell_text(kind, choice)
    return True


def one_request(address, rng, plan, record):
    kind, path, body, expected, streamed, drop_after = plan(rng)
    host, port = address.split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=120)
    start = time.monotonic()
    try:
        connection.request("POST", path, json.dumps(body),
                           {"Content-Type": "application/json"})
        response = connection.getresponse()
        status = response.status
        if kind.startswith("bad:"):
            # Refused as bad however busy the server is (a batch is checked whole before it is
            # queued), and a prompt's error names the element: prompt[1][0].
            error = json.loads(response.read()).get("error", {})
            if status != 400 or str(error.get("param")).split("[")[0] != kind[4:]:
                raise Unexpected(f"{kind}: status {status}, error {error}")
            record.answer(kind, "refused_as_meant", time.monotonic() - start)
            return
        if status == 429:
            response.read()
            record.answer(kind, "overloaded", time.monotonic() - start)
            return
        if status != 200:
            raise Unexpected(f"{kind}: status {status}: {response.read()[:300]!r} for {body}")
        if streamed:
            whole = read_stream(kind, response, expected, drop_after)
            record.answer(kind, "ok" if whole else "dropped", time.monotonic() - start)
            return
        answer = json.loads(response.read())
        check_whole(kind, body, answer, expected)
        if kind == "tokenize":
            connection.request("POST", "/detokenize", json.dumps({"tokens": answer["tokens"]}),
                               {"Content-Type": "application/json"})
            round_trip = connection.getresponse()
            text = json.loads(round_trip.read()).get("prompt")
            if round_trip.status != 200 or text != body["prompt"]:
                raise Unexpected(f"detokenize gave {text!r} for {body['prompt']!r}")
        record.answer(kind, "ok", time.monotonic() - start)
    except Unexpected as error:
        record.fail(str(error))
    except (OSError, http.client.HTTPException, ValueError) as error:
        record.fail(f"{kind}: {type(error).__name__}: {error} for {body}")
    finally:
        connection.close()


def client(address, seed, stop_at, plan, record):
    rng = random.Random(seed)
    while time.monotonic() < stop_at:
        one_request(address, rng, plan, record)


def sample(server, record, stop_event, every):
    while not stop_event.wait(every):
        gauges = server.gauges()
        with record.lock:
            record.samples.append((time.monotonic(), server.rss_mib(),
                                   gauges["slotserve_state_slots_used"],
                                   gauges["slotserve_requests_running"],
                                   gauges["slotserve_requests_queued"]))


def settled_gauges(server):
    """The gauges once nothing runs: a dropped stream ends when the server next writes to it."""
    deadline = time.monotonic() + 30
    while True:
        gauges = server.gauges()
        idle = all(gauges[name] == 0 for name in ("slotserve_state_slots_used",
                                                  "slotserve_requests_running",
                                                  "slotserve_requests_queued"))
        if idle or time.monotonic() > deadline:
            return gauges
        time.sleep(0.5)


def report(args, server, start, record, gauges, exit_status):
    window = args.window_minutes * 60
    windows = max(1, int(round(args.minutes * 60 / window)))
    lines = [
        "# HTTP soak run", "",
        f"Command: `bench/http_soak.py --minutes {args.minutes:g} --window-minutes "
        f"{args.window_minutes:g} --clients {args.clients} --max-slots {args.max_slots} "
        f"--max-queued {args.max_queued} --threads {args.threads} --model "
        f"{os.path.relpath(args.model, ROOT)}`", "",
        f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. Machine: "
        f"{os.cpu_count()} cores. Server start-up line:", "",
        "```", server.start_line.replace(ROOT + "/", ""), "```", "",
        "| minutes | answers | ok | dropped by client | 429 | refused (meant) | unexpected |"
        " whole answer p50 ms | p99 ms | RSS at end MiB | RSS max MiB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for index in range(windows):
        lo, hi = start + index * window, start + (index + 1) * window
        answers = [a for a in record.answers if lo <= a[0] < hi]
        counts = {name: sum(1 for a in answers if a[2] == name) for name in OUTCOMES}
        latency = [a[3] * 1000 for a in answers if a[2] == "ok" and a[1] != "stream"]
        rss = [s[1] for s in record.samples if lo <= s[0] < hi]
        bad = sum(1 for t, _ in record.unexpected if lo <= t < hi)
        lines.append(
            f"| {index * args.window_minutes:g}–{(index + 1) * args.window_minutes:g} | "
            f"{len(answers) + bad} | {counts['ok']} | {counts['dropped']} | "
            f"{counts['overloaded']} | {counts['refused_as_meant']} | {bad} | "
            f"{percentile(latency, 0.5):.1f} | {percentile(latency, 0.99):.1f} | "
            f"{rss[-1] if rss else float('nan'):.1f} | {max(rss, default=float('nan')):.1f} |")
    kinds = sorted({a[1] for a in record.answers})
    lines += ["", "Answers by request kind (all windows):", "",
              "| kind | " + " | ".join(OUTCOMES) + " |", "|---|" + "---:|" * len(OUTCOMES)]
    for kind in kinds:
        lines.append(f"| {kind} | " + " | ".join(
            str(sum(1 for a in record.answers if a[1] == kind and a[2] == name))
            for name in OUTCOMES) + " |")
    after_warmup = [s[1] for s in record.samples if s[0] >= start + window]
    lines += [
        "",
        f"RSS after the first window: min {min(after_warmup, default=float('nan')):.1f} MiB, "
        f"max {max(after_warmup, default=float('nan')):.1f} MiB.",
        f"After the last answer: slots used {gauges['slotserve_state_slots_used']:g}, "
        f"requests running {gauges['slotserve_requests_running']:g}, queued "
        f"{gauges['slotserve_requests_queued']:g}.",
        f"Unexpected answers: {len(record.unexpected)}"
        + "".join(f"\n- {text}" for _, text in record.unexpected[:20]),
        f"Server exit status after SIGTERM: {exit_status}.",
    ]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    with open(args.csv, "w", encoding="utf-8") as out:
        out.write("seconds,rss_mib,slots_used,requests_running,requests_queued\n")
        for t, rss, used, running, queued in record.samples:
            out.write(f"{t - start:.1f},{rss:.1f},{used:g},{running:g},{queued:g}\n")
    print("\n".join(lines))
    idle = all(gauges[name] == 0 for name in ("slotserve_state_slots_used",
                                              "slotserve_requests_running",
                                              "slotserve_requests_queued"))
    return idle and not record.unexpected and exit_status == 0


def main():
    args = parse_args()
    with open(os.path.join(args.model, "config.json"), encoding="utf-8") as file:
        config = json.load(file)
    if config.get("format") == "slotserve-seq2seq":
        plan = Seq2seqMix(config, sampling).plan
    else:
        plan = lambda rng: request_plan(rng, config["vocab_size"])  # noqa: E731
    server = Server(args, ["--http-listen=127.0.0.1:0", f"--max-queued={args.max_queued}"])
    record = Record()
    try:
        if server.http_address is None:
            sys.exit("http_soak: the server printed no HTTP address")
        start = time.monotonic()
        stop_event = threading.Event()
        sampler = threading.Thread(target=sample,
                                   args=(server, record, stop_event, args.sample_seconds))
        sampler.start()
        clients = [threading.Thread(target=client, args=(
            server.http_address, args.seed * 1000 + i, start + args.minutes * 60, plan,
            record)) for i in range(args.clients)]
        for thread in clients:
            thread.start()
        for thread in clients:
            thread.join()
        stop_event.set()
        sampler.join()
        gauges = settled_gauges(server)
    except BaseException:
        server.stop()
        raise
    exit_status = server.stop()
    ok = report(args, server, start, record, gauges, exit_status)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
