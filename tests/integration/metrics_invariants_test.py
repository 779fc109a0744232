"""Do the Prometheus metrics (the --metrics-listen endpoint and /metrics beside the HTTP API) and
the CLI agree with what the clients saw? Real servers on loopback (port 0): kjv-abc-m32 (twice:
a roomy one and a 1-slot / 1-queued one) and the translation model es-en-abc-m32-long. Each
scenario scrapes before and after a known, deterministic mix (gRPC, HTTP, CLI) and checks the
deltas against the clients' own counts, as README's "Metrics" paragraph defines them. Each
violation is one line (what, sent, got, expected); exit 1 on any, else exit 0 with the number
of checks.

    metrics_invariants_test.py [SERVER [CLI [MODELS_DIR]]]

(defaults: build/server/slotserve-server, build/clients/slotserve-cli, models/trained)
"""

import json
import sys
import threading
import time
from pathlib import Path

from grpc_invariant_checks import GENESIS, ROOT, SPANISH, check, report_and_exit, short, slotserve
from metrics_invariant_checks import (LONG, Server, check_gauges, cli_summary, grpc_stream,
                                      parse_metrics, phase, scenario, value, wait_until)

SERVER = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build/server/slotserve-server"
CLI = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "build/clients/slotserve-cli"
MODELS = Path(sys.argv[3]) if len(sys.argv) > 3 else ROOT / "models/trained"
P = "In the beginning"
P_TOKENS = 4  # with BOS: what a request of P cut off (no Finished seen) counts
GREEDY = {"temperature": 0}


def tokenize(s, text):
    return s.client._stub.Tokenize(slotserve._stubs.pb.TokenizeRequest(
        text=text.encode(), add_bos=True), timeout=30).ids


# ---------------------------------------------------------------- decoder-only mix
def decoder_mix(s):
    ids = tokenize(s, P)
    check(len(ids) == P_TOKENS, "prompt length the cut-off scenarios count", P, len(ids), P_TOKENS)
    scenario(s, "gRPC Generate greedy",
             lambda e: grpc_stream(s, e, GENESIS, max_new_tokens=12, **GREEDY))

    def complete_stop(e):
        c = s.client.complete(P, max_new_tokens=30, stop=[" LORD"], **GREEDY)
        e.choice(c.finished.finish_reason, c.finished.generated_tokens)
        e.request(c.finished.prompt_tokens)
    scenario(s, "gRPC Complete with a stop sequence", complete_stop)
    scenario(s, "gRPC Generate n=3", lambda e: grpc_stream(
        s, e, P, n=3, temperature=0.8, seed=5, max_new_tokens=10))

    def grpc_beam(e):  # counted once, with its best hypothesis's tokens
        e.decode_rows_exact = False
        c = s.client.complete(P, beam_width=3, n_best=2, max_new_tokens=8)
        best = c.finished.hypotheses[0].token_ids if c.finished.hypotheses else None
        check(c.finished.generated_tokens == len(c.token_ids) == len(best or []),
              "gRPC beam: Finished.generated_tokens == the best hypothesis's tokens", "beam 3",
              (c.finished.generated_tokens, len(c.token_ids), best), "equal")
        e.choice(c.finished.finish_reason, c.finished.generated_tokens)
        e.request(c.finished.prompt_tokens)
    scenario(s, "gRPC beam width 3, n_best 2", grpc_beam)

    stream = {"stream": True, "stream_options": {"include_usage": True}}
    sampled = {"seed": 3, "temperature": 0.9}
    for path, body in [
            ("/v1/completions", {"prompt": P, "max_tokens": 10, **GREEDY}),
            ("/v1/chat/completions", {"messages": [{"role": "user", "content": "Who made light?"}],
                                      "max_tokens": 10, **GREEDY}),
            ("/v1/completions", {"prompt": P, "max_tokens": 10, **GREEDY, **stream}),
            ("/v1/chat/completions", {"messages": [{"role": "user", "content": "Who?"}],
                                      "max_tokens": 10, **GREEDY, **stream}),
            ("/v1/completions", {"prompt": P, "max_tokens": 10, "n": 2, **sampled}),
            ("/v1/completions", {"prompt": P, "max_tokens": 8, "n": 2, **sampled, **stream}),
            ("/v1/completions", {"prompt": [P, "And God said", [1, 50, 60]], "max_tokens": 6,
                                 **GREEDY}),
            ("/v1/completions", {"prompt": GENESIS, "max_tokens": 5, "echo": True, "logprobs": 1,
                                 **GREEDY})]:
        prompts = len(body["prompt"]) if isinstance(body.get("prompt"), list) else 1

        def run(e, path=path, body=body, prompts=prompts):
            e.http_answer(*s.post(path, body), body, prompts=prompts)
            e.lookups -= prompts if body.get("echo") else 0  # echo scoring skips the cache
        scenario(s, f"HTTP {path} {json.dumps(body)[:90]}", run)

    for best_of, n in ((3, 1), (3, 2)):
        body = {"prompt": P, "max_tokens": 8, "best_of": best_of, "n": n, "ignore_eos": True,
                **sampled}

        def best_of_run(e, body=body, best_of=best_of, n=n):
            # The choices left out ran too: each counts, with its 8 tokens (eos ignored).
            if e.http_answer(*s.post("/v1/completions", body), body) is not None:
                e.discarded_best_of(best_of - n, body["max_tokens"])
        scenario(s, f"HTTP best_of {best_of} n {n}: every choice counted", best_of_run)

    def http_beam(e):  # counted once, with its best hypothesis's (choice 0's) tokens
        e.decode_rows_exact = False
        body = {"prompt": P, "max_tokens": 8, "use_beam_search": True, "best_of": 3, "n": 2}
        status, answer = s.post("/v1/completions", body)
        if check(status == 200, "HTTP status", body, f"{status} {short(answer)}", 200):
            best = answer["choices"][0]
            # Its token count is known from the answer when it ran to max_tokens.
            if check(best["finish_reason"] == "length", "HTTP beam: the best ran to max_tokens",
                     body, best, "finish_reason length (deterministic for this prompt)"):
                e.choice("length", body["max_tokens"])
            e.request(answer["usage"]["prompt_tokens"])
    scenario(s, "HTTP beam search best_of 3 n 2: counted once", http_beam)

    long_prompt = " ".join([GENESIS] * 12)

    def prefix(e):
        for _ in range(2):
            body = {"prompt": long_prompt, "max_tokens": 4, **GREEDY}
            e.http_answer(*s.post("/v1/completions", body), "long prompt")
    before = s.idle("before prefix cache")
    scenario(s, "HTTP the same long prompt twice (prefix cache)", prefix)
    after = s.scrape()
    n = len(tokenize(s, long_prompt))
    d = lambda name: value(after, name) - value(before, name)  # noqa: E731
    hits, saved = d("slotserve_prefix_cache_hits_total"), \
        d("slotserve_prefix_cache_tokens_saved_total")
    check(hits == 1 and saved == (n - 1) // 64 * 64, "prefix cache hit and tokens saved",
          f"{n}-token prompt twice", f"hits {hits}, saved {saved}",
          f"hits 1, saved {(n - 1) // 64 * 64}")

    def refusals(e):
        for body, raw, status, outcome in (
                ({"prompt": P, "temperature": -1}, None, 400, "invalid_argument"),
                ({"prompt": P, "bogus_param": 1}, None, 400, "invalid_argument"),
                ({"prompt": P, "n": 99}, None, 400, "invalid_argument"),
                ({"prompt": P, "model": "nope"}, None, 404, "not_found"),
                ({}, "{not json", 400, "invalid_argument")):
            got, _ = s.post("/v1/completions", body, raw)
            check(got == status, "HTTP refusal status", raw or body, got, status)
            e.outcomes[outcome] += 1
        got, _ = s.post("/v1/chat/completions", {"messages": [], "max_tokens": 3})
        check(got == 400, "HTTP refusal status", "chat with no messages", got, 400)
        e.outcomes["invalid_argument"] += 1
        try:
            s.client.complete(P, top_p=1.5)
            check(False, "gRPC refusal", "top_p 1.5", "accepted", "InvalidArgumentError")
        except slotserve.InvalidArgumentError:
            e.outcomes["invalid_argument"] += 1
        check(s.get(s.http_port, "/v1/nothing")[0] == 404, "unknown route 404", "GET /v1/nothing",
              "", 404)
    scenario(s, "refusals (HTTP 400/404, gRPC INVALID_ARGUMENT)", refusals)

    def cancels(e):
        stream = s.client.generate(P, max_new_tokens=LONG, ignore_eos=True, **GREEDY)
        first = next(iter(stream))
        stream.cancel()
        e.cut_off("cancelled", P_TOKENS, len(first.token_ids))
        s.drop_http_stream({"prompt": P, "max_tokens": LONG, "ignore_eos": True, "stream": True,
                            **GREEDY})
        e.cut_off("cancelled", P_TOKENS)
    scenario(s, "gRPC stream cancelled + HTTP stream dropped after the first chunk", cancels)

    def deadlines(e):
        # Each stream is read until its deadline; a token read proves it ran (admitted, looked
        # up in the prefix cache), which 2 s leaves time for on a slow sanitizer build. The
        # client's cancel of its late call may reach the engine before the server's copy of
        # the deadline passes: still deadline_exceeded.
        errors = []

        def one():
            stream = s.client.generate(P, max_new_tokens=LONG, ignore_eos=True, timeout=2.0,
                                       **GREEDY)
            read = 0
            try:
                for chunk in stream:
                    read += len(chunk.token_ids)
            except slotserve.SlotServeError as error:
                errors.append((type(error).__name__, read))
                return
            errors.append(("no error", read))
        threads = [threading.Thread(target=one) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for name, read in errors:
            check(name == "DeadlineExceededError" and read > 0, "client deadline error after "
                  "tokens", "timeout 2 s", (name, read), "DeadlineExceededError after >0 tokens")
            e.cut_off("deadline_exceeded", P_TOKENS, read)
    scenario(s, "8 concurrent gRPC Generate, timeout 2 s (running when it passes)", deadlines)

    def sessions(e):
        kept = s.client.complete(P, max_new_tokens=5, keep_session=True, **GREEDY)
        e.choice(kept.finished.finish_reason, kept.finished.generated_tokens)
        e.request(kept.finished.prompt_tokens)
        m = s.scrape()
        got = {k: value(m, "slotserve_" + k) for k in ("sessions", "session_bytes")}
        check(got["sessions"] == 1 and got["session_bytes"] > 0, "session gauges after keep",
              "keep_session", got, "1 session, > 0 bytes")
        more = s.client.complete(" and", max_new_tokens=5, session=kept.finished.session_handle,
                                 **GREEDY)
        e.choice(more.finished.finish_reason, more.finished.generated_tokens)
        e.request(more.finished.prompt_tokens, lookup=False)  # no prefix cache for a session
    scenario(s, "gRPC session kept then continued", sessions)

    def cli(e):
        rc, out, err = s.cli("generate", "--temperature", "0", "--max-new-tokens", "10",
                             "And God said")
        status, answer = s.post("/v1/completions", {"prompt": "And God said", "max_tokens": 10,
                                                    **GREEDY})
        e.http_answer(status, answer, "HTTP twin of the CLI")
        text = answer["choices"][0]["text"] if status == 200 else None
        check(rc == 0 and out == text, "CLI generate stdout == HTTP greedy text",
              "generate --temperature 0 --max-new-tokens 10 'And God said'",
              f"rc {rc}, {out!r}", f"rc 0, {text!r}")
        prompt = cli_summary(e, err, "generate")
        if prompt is not None and status == 200:
            check(prompt == answer["usage"]["prompt_tokens"], "CLI prompt == usage",
                  "And God said", prompt, answer["usage"]["prompt_tokens"])
        rc, out, err = s.cli("info")
        check(rc == 0 and f"{s.info.state_bytes_per_request}" in out, "CLI info", "info",
              f"rc {rc} {short(out, 120)}", f"rc 0 naming {s.info.state_bytes_per_request} bytes")
        rc, out, _ = s.cli("health")
        check(rc == 0 and out.strip() == "SERVING", "CLI health", "health", (rc, out),
              (0, "SERVING"))
        rc, out, err = s.cli("generate", "--top-p", "1.5", "x")
        check(rc == 1 and "INVALID_ARGUMENT" in err, "CLI refusal exit", "--top-p 1.5", (rc, err),
              "rc 1, INVALID_ARGUMENT")
        e.outcomes["invalid_argument"] += 1
    scenario(s, "CLI generate/info/health/refusal + HTTP twin", cli)

    m, h = s.scrape(), parse_metrics(s.get(s.http_port, "/metrics")[1], "HTTP /metrics")
    diff = {k for k in set(m) | set(h) if "seconds" not in k[0] and m.get(k) != h.get(k)}
    check(not diff, "HTTP /metrics == --metrics-listen (idle, non-timing series)", "both",
          sorted(diff)[:4], "same series and values")
    check_gauges(s, m)


# ---------------------------------------------------------------- a full queue
def full_queue(s):
    """--max-slots=1 --max-queued=1: an occupant holds the slot until the test cancels it."""
    # No deadline of its own (an hour): it must outlast every wait below, even failed ones.
    occupant = s.client.generate(P, max_new_tokens=LONG, ignore_eos=True, timeout=3600,
                                 **GREEDY)
    occupant_chunks = iter(occupant)
    first = next(occupant_chunks)
    # The gauges are set after the step that sent the first token: wait for them.
    wait_until(lambda: s.gauge("requests_running") == 1 == s.gauge("state_slots_used"))
    m, info = s.scrape(), s.client.info()
    check(value(m, "slotserve_requests_running") == 1 == info.requests_running and
          value(m, "slotserve_state_slots_used") == 1 == info.slots_total - info.slots_free,
          "gauges while one request runs", "1 running stream",
          {k: value(m, "slotserve_" + k) for k in ("requests_running", "state_slots_used")},
          "1 each, as GetModelInfo")

    def batch(e):  # queued whole or not at all: nothing of it left behind
        status, answer = s.post("/v1/completions", {"prompt": [P, P], "max_tokens": 2})
        check(status == 429, "batch of 2 with room for 1 queued", "2-prompt batch", status, 429)
        e.outcomes["resource_exhausted"] += 1
        queued = (s.gauge("requests_queued"), s.client.info().requests_queued)
        check(queued == (0, 0), "queue place free right after the refused batch",
              "2-prompt batch refused", f"queued (metric, GetModelInfo) {queued}", (0, 0))
    phase(s, "HTTP 2-prompt batch refused 429 (queue room for 1)", batch)

    def deadline(e):  # queued at once (the place is free), never admitted
        try:
            list(s.client.generate(P, max_new_tokens=2, timeout=2.0))
            name = "no error"
        except slotserve.SlotServeError as error:
            name = type(error).__name__
        check(name == "DeadlineExceededError", "queued past its deadline",
              "timeout 2 s behind a busy slot", name, "DeadlineExceededError")
        e.outcomes["deadline_exceeded"] += 1
        e.prompt += P_TOKENS  # counted although never admitted, as for any accepted request
    phase(s, "gRPC deadline passing in the queue", deadline)

    waiter = s.client.generate(P, max_new_tokens=3, **GREEDY)
    results = []
    thread = threading.Thread(target=lambda: results.append([list(waiter),
                                                             waiter.finished_choices]))
    thread.start()
    wait_until(lambda: s.gauge("requests_queued") == 1)
    check(s.gauge("requests_queued") == 1 == s.client.info().requests_queued,
          "queued gauge", "one waiting", s.gauge("requests_queued"), 1)

    def full(e):
        status, answer = s.post("/v1/completions", {"prompt": P, "max_tokens": 2})
        check(status == 429 and answer["error"]["type"] == "rate_limit_error", "HTTP 429",
              "queue full", (status, short(answer)), "429 rate_limit_error")
        e.outcomes["resource_exhausted"] += 1
        try:
            s.client.complete(P, max_new_tokens=2)
            check(False, "gRPC on a full queue", "Complete", "accepted", "ResourceExhaustedError")
        except slotserve.ResourceExhaustedError:
            e.outcomes["resource_exhausted"] += 1
        rc, _, err = s.cli("generate", "--max-new-tokens", "2", P)
        check(rc == 1 and "RESOURCE_EXHAUSTED" in err, "CLI exit on a full queue", "generate",
              (rc, err), "rc 1 RESOURCE_EXHAUSTED")
        e.outcomes["resource_exhausted"] += 1
    phase(s, "queue full: HTTP 429, gRPC and CLI RESOURCE_EXHAUSTED", full)

    def cancel(e):
        occupant.cancel()
        list(occupant_chunks)
        e.cut_off("cancelled", P_TOKENS, len(first.token_ids))
        thread.join()  # the waiter's own deadline (the client's timeout) bounds it
        if check(results and results[0][1], "queued request finished", "after cancel",
                 results, "finished"):
            for f in results[0][1]:
                e.choice(f.finish_reason, f.generated_tokens)
                e.request(f.prompt_tokens)
    phase(s, "occupant cancelled, the queued request runs", cancel, steps_after=0)
    s.idle("full queue")


# ---------------------------------------------------------------- translation model
def seq2seq_mix(s):
    scenario(s, "seq2seq gRPC translate greedy", lambda e: grpc_stream(
        s, e, None, source=SPANISH[0], max_new_tokens=30, **GREEDY))
    for body in ({"source": SPANISH[1], "max_tokens": 12, "n": 2, "seed": 3, "temperature": 0.7},
                 {"source": SPANISH[2], "prompt": "Behold", "max_tokens": 12, **GREEDY,
                  "stream": True, "stream_options": {"include_usage": True}},
                 {"source": SPANISH[0], "prompt": [60, 70, 80], "echo": True, "logprobs": 0,
                  "max_tokens": 1}):
        scenario(s, f"seq2seq HTTP {json.dumps(body)[:80]}", lambda e, body=body: e.http_answer(
            *s.post("/v1/completions", body), body, encode=True))

    def cli(e):
        rc, out, err = s.cli("translate", "--source", SPANISH[1], "--temperature", "0",
                             "--max-new-tokens", "20")
        status, answer = s.post("/v1/completions", {"source": SPANISH[1], "max_tokens": 20,
                                                    **GREEDY})
        e.http_answer(status, answer, "HTTP twin", encode=True)
        text = answer["choices"][0]["text"] if status == 200 else None
        check(rc == 0 and out == text, "CLI translate stdout == HTTP greedy text",
              f"translate --source {SPANISH[1]!r} --temperature 0 --max-new-tokens 20",
              f"rc {rc}, {out!r}", f"rc 0, {text!r}")
        cli_summary(e, err, "translate", lookup=False, encode=True)
        got = s.post("/v1/completions", {"prompt": "x", "max_tokens": 2})[0]
        check(got == 400, "seq2seq without source refused", "no source", got, 400)
        e.outcomes["invalid_argument"] += 1
    scenario(s, "seq2seq CLI translate + HTTP twin + refusal", cli)
    check_gauges(s, s.scrape())


def main():
    started = time.time()
    servers = []
    long_ok = f"--max-new-tokens-limit={LONG}"
    try:
        servers.append(Server(SERVER, CLI, MODELS / "kjv-abc-m32", "--max-slots=8", long_ok))
        decoder_mix(servers[-1])
        servers.append(Server(SERVER, CLI, MODELS / "kjv-abc-m32", "--max-slots=1",
                              "--max-queued=1", long_ok))
        full_queue(servers[-1])
        servers.append(Server(SERVER, CLI, MODELS / "es-en-abc-m32-long", "--max-slots=4"))
        seq2seq_mix(servers[-1])
    finally:
        for s in servers:
            s.stop()
    report_and_exit(started)


if __name__ == "__main__":
    main()
