"""Helpers of grpc_state_invariants_test.py: one-line violation reports, real servers and a real
redis-server on free loopback ports, the Python client, the HTTP API's tokenizer and echo
scoring, and waiting for the slot pool to be whole again."""

import http.client
import json
import math
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
# The Python client: its built package (stubs generated) unless PYTHONPATH already names one.
for candidate in (os.environ.get("SLOTSERVE_PYTHON_CLIENT_DIR"), ROOT / "build/clients/python"):
    if candidate and (Path(candidate) / "slotserve/v1").is_dir():
        sys.path.insert(1, str(candidate))
        break

import slotserve  # noqa: E402
from loopback_server import start_server  # noqa: E402

GENESIS = "In the beginning God created the heaven and the earth"
GREEDY = {"temperature": 0}
VIOLATIONS = []
CHECKS = [0]


def short(value, limit=300):
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + f"...(+{len(text) - limit})"


def check(condition, what, sent, got, expected):
    """Counts one check; a violation is printed on one line: what, sent, got, expected."""
    CHECKS[0] += 1
    if not condition:
        line = (f"VIOLATION: {what} | sent: {short(sent)} | got: {short(got)} | "
                f"expected: {short(expected)}")
        VIOLATIONS.append(line)
        print(line, flush=True)
    return bool(condition)


def close(a, b, tolerance=1e-4):
    return abs(a - b) <= tolerance * max(1.0, abs(a), abs(b))


def error_of(call):
    """(exception class name, message) of what `call()` raised, or (None, its result)."""
    try:
        return None, call()
    except slotserve.SlotServeError as error:
        return type(error).__name__, str(error)


def expect_refusal(what, sent, call, error_class, *needles):
    """The call must raise `error_class` with every needle in its message."""
    name, message = error_of(call)
    ok = name == error_class and all(n.lower() in str(message).lower() for n in needles)
    return check(ok, what, sent, f"{name}: {short(message)}",
                 f"{error_class} mentioning {list(needles)}")


class Server:
    """slotserve-server on loopback (gRPC, HTTP, metrics on port 0), with a client."""

    def __init__(self, binary, model_dir, *flags):
        self.process, self.http_port, self.grpc_port = start_server(binary, model_dir, *flags)
        self.target = f"127.0.0.1:{self.grpc_port}"
        self.client = slotserve.Client(self.target, timeout=60)
        self.info = self.client.info()

    def http(self, path, body):
        connection = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=60)
        try:
            connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
            response = connection.getresponse()
            return response.status, json.loads(response.read().decode() or "null")
        finally:
            connection.close()

    def tokenize(self, text, bos):
        response = self.client._stub.Tokenize(
            slotserve._stubs.pb.TokenizeRequest(text=text.encode(), add_bos=bos), timeout=30)
        return list(response.ids)

    def detokenize(self, ids):
        return self.http("/detokenize", {"tokens": ids})[1]["prompt"]

    def wait_slots_free(self, what, sent, seconds=5.0):
        """The pool must be whole again (slots_free == slots_total) within `seconds`."""
        deadline = time.time() + seconds
        while True:
            info = self.client.info()
            if info.slots_free == info.slots_total and info.requests_running == 0:
                break
            if time.time() > deadline:
                break
            time.sleep(0.02)
        return check(info.slots_free == info.slots_total, f"slots returned after {what}", sent,
                     f"slots_free {info.slots_free} of {info.slots_total}, running "
                     f"{info.requests_running}, queued {info.requests_queued}",
                     "slots_free == slots_total")

    def stop(self):
        self.client.close()
        terminate(self.process, timeout=15)


def terminate(process, timeout):
    """SIGTERM, then SIGKILL after `timeout` seconds; reaps the process either way."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Redis:
    """A redis-server on a free loopback port, persistence off; None from start() without one."""

    @staticmethod
    def start():
        for _ in range(5):
            port = free_port()
            try:
                process = subprocess.Popen(
                    ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                     "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            except FileNotFoundError:
                return None
            deadline = time.time() + 5
            while time.time() < deadline and process.poll() is None:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    redis = Redis()
                    redis.process, redis.url = process, f"redis://127.0.0.1:{port}"
                    return redis
                except OSError:
                    time.sleep(0.05)
            process.kill()
            process.wait()
        return None

    def stop(self):
        self.process.kill()
        self.process.wait()


def streamed(client, prompt, **options):
    """(chunks, finished choices) of a Generate call, or raises the client's error."""
    stream = client.generate(prompt, **options)
    chunks = list(stream)
    return chunks, stream.finished_choices


def stream_ids(chunks, choice=0):
    return [i for c in chunks if c.choice_index == choice for i in c.token_ids]


def stream_text(chunks, choice=0):
    return "".join(c.text for c in chunks if c.choice_index == choice)


def hypothesis_score(logprob_sum, length, penalty):
    return logprob_sum if penalty == 0 else logprob_sum / math.pow(max(length, 1), penalty)


def report_and_exit(started):
    elapsed = time.time() - started
    if VIOLATIONS:
        print(f"FAIL: {len(VIOLATIONS)} of {CHECKS[0]} checks violated ({elapsed:.1f} s)")
        sys.exit(1)
    print(f"OK: {CHECKS[0]} checks hold ({elapsed:.1f} s)")
    sys.exit(0)


SPANISH = ["Al principio creó Dios los cielos y la tierra.",
           "Y dijo Dios: Sea la luz: y fué la luz.",
           "Como está escrito en Isaías el profeta: He aquí yo envío á mi mensajero."]


def check_seq2seq(binary, model_dir):
    """An encoder-decoder model over gRPC: source forms, target prefixes, n, beams, sessions,
    export / import, prompt scoring against HTTP echo, prefix states beside a source, refusals."""
    s = Server(binary, model_dir, "--max-slots=6")
    fresh = Server(binary, model_dir, "--max-slots=2")  # has seen no source or prefix
    try:
        c, eos, greedy = s.client, s.info.eos_id, dict(max_new_tokens=40, temperature=0)
        for src in SPANISH:
            text = c.complete(None, source=src, **greedy)
            ids = s.tokenize(src, False) + [eos]
            by_ids = c.complete(None, source=ids, **greedy)
            check(text.token_ids == by_ids.token_ids, "seq2seq: source text = its ids + eos",
                  {"source": src[:30]}, by_ids.token_ids, text.token_ids)
            chunks, fin = streamed(c, None, source=src, **greedy)
            check(stream_ids(chunks) == text.token_ids and stream_text(chunks) == text.text
                  and fin[0].prompt_tokens == 1 and fin[0].generated_tokens == len(text.token_ids),
                  "seq2seq: stream = Complete; prompt_tokens counts the start token", {"source": src[:30]},
                  (stream_ids(chunks), fin[0].prompt_tokens), (text.token_ids, 1))
            k = 3
            prefixed = c.complete(text.token_ids[:k], source=src, **greedy)
            check(prefixed.token_ids == text.token_ids[k:len(text.token_ids)] and
                  prefixed.finished.prompt_tokens == 1 + k,
                  "seq2seq: greedy with its first k tokens as target prefix continues alike",
                  {"source": src[:30], "prompt": text.token_ids[:k]}, prefixed.token_ids,
                  text.token_ids[k:])
            beam = dict(beam_width=4, n_best=3, length_penalty=1.0, max_new_tokens=40)
            b1, b2 = c.complete(None, source=src, **beam), c.complete(None, source=ids, **beam)
            h1 = [(h.token_ids, round(h.score, 6)) for h in b1.finished.hypotheses]
            h2 = [(h.token_ids, round(h.score, 6)) for h in b2.finished.hypotheses]
            check(h1 == h2 and len(h1) == 3 and all(a[1] >= b[1] for a, b in zip(h1, h1[1:]))
                  and b1.text == b1.finished.hypotheses[0].text,
                  "seq2seq beam: deterministic, text = ids form, ordered, best first", beam, h1, h2)
            for h in b1.finished.hypotheses:
                want = hypothesis_score(h.logprob_sum, len(h.token_ids), 1.0)
                check(close(h.score, want, 1e-6), "seq2seq beam score = sum / len", beam,
                      h.score, want)
            # Prompt scoring: gRPC logprobs.prompt vs HTTP echo, every prompt token scored.
            target = text.token_ids[:-1]
            scored = c.complete(target, source=ids, max_new_tokens=1, logprobs=0,
                                prompt_logprobs=True, temperature=0)
            status, body = s.http("/v1/completions", {"source": ids, "prompt": target,
                                                      "max_tokens": 1, "echo": True, "logprobs": 0,
                                                      "temperature": 0})
            http_lp = body["choices"][0]["logprobs"]["token_logprobs"][:len(target)] \
                if status == 200 else []
            grpc_lp = [p.logprob for p in scored.prompt_logprobs]
            check(len(grpc_lp) == len(target) and status == 200 and None not in http_lp and
                  close(sum(grpc_lp), sum(http_lp), 1e-5),
                  "seq2seq: gRPC prompt logprobs (every token) = HTTP echo", {"prompt": target},
                  (len(grpc_lp), sum(grpc_lp)), (len(target), sum(x or 0 for x in http_lp)))
            lps = c.complete(None, source=ids, logprobs=0, **greedy).logprobs
            check(close(sum(p.logprob for p in lps), sum(grpc_lp) + scored.logprobs[0].logprob
                        if scored.logprobs else 0, 1e-4) if len(lps) == len(target) + 1 else False,
                  "seq2seq: generated logprobs = scoring the translation as a prefix",
                  {"source": src[:30]}, sum(p.logprob for p in lps), "prompt-scored sum")
        src = SPANISH[0]
        # n > 1: choice i = a single request with seed + i.
        opts = dict(max_new_tokens=12, temperature=1.0, seed=77)
        chunks, fins = streamed(c, None, source=src, n=3, **opts)
        for i in range(3):
            one = c.complete(None, source=src, **{**opts, "seed": 77 + i})
            check(stream_ids(chunks, i) == one.token_ids, f"seq2seq n=3 choice {i} = seed + {i}",
                  {"n": 3, **opts}, stream_ids(chunks, i), one.token_ids)
        # Sessions hold the cross memory: a continuation (no source) = one request with the
        # whole target so far as prefix; export / import to another server continues alike.
        first = c.complete(None, source=src, keep_session=True, max_new_tokens=4, temperature=0)
        handle = first.finished.session_handle
        more = s.tokenize(" the", False)
        got = c.complete(" the", session=handle, **greedy)
        want = c.complete(first.token_ids + more, source=src, **greedy)
        check(got.token_ids == want.token_ids, "seq2seq session continuation = prefix request",
              {"session": handle, "prompt": " the"}, got.token_ids, want.token_ids)
        blob = c.export_session(handle)
        moved = fresh.client.complete(" the", session=fresh.client.import_session(blob), **greedy)
        check(moved.token_ids == want.token_ids, "seq2seq: exported session continues alike on "
              "another server (cross memory moved)", {"blob bytes": len(blob)}, moved.token_ids,
              want.token_ids)
        # Prefix states are not used beside a source: a long shared target prefix with two
        # sources equals a server without the prefix cache.
        prefix = (want.token_ids * 20)[:70] if want.token_ids else [300] * 70
        for src in SPANISH[:2]:
            a = c.complete(prefix, source=src, max_new_tokens=8, temperature=0, logprobs=0)
            b = fresh.client.complete(prefix, source=src, max_new_tokens=8, temperature=0,
                                      logprobs=0)
            check([(p.id, p.logprob) for p in a.logprobs] == [(p.id, p.logprob) for p in b.logprobs],
                  "seq2seq: a 70-token target prefix after another source = on a fresh server",
                  {"source": src[:30], "prefix": 70}, a.token_ids, b.token_ids)
        vocab, limit = s.info.vocab_size, s.info.max_source_tokens
        for what, call, needle in [
                ("no source", lambda: c.complete("x", max_new_tokens=2), "source"),
                ("empty source text", lambda: c.complete(None, source="", max_new_tokens=2),
                 "source"),
                ("empty source ids", lambda: c.complete(None, source=[], max_new_tokens=2),
                 "source"),
                ("source id = vocab", lambda: c.complete(None, source=[vocab], max_new_tokens=2),
                 str(vocab)),
                ("source id -1", lambda: c.complete(None, source=[-1], max_new_tokens=2), "-1"),
                ("source too long", lambda: c.complete(None, source=[5] * (limit + 1),
                                                       max_new_tokens=2), str(limit + 1)),
                ("source on a continuation", lambda: c.complete(" x", session=handle, source=src,
                                                                max_new_tokens=2), "source")]:
            expect_refusal(f"seq2seq refuses {what}", what, call, "InvalidArgumentError", needle)
        s.wait_slots_free("seq2seq requests", {"seq2seq": True})
    finally:
        s.stop()
        fresh.stop()


def continue_reference(s, first_prompt, first, second, **opts):
    """The tokens one request over the whole conversation gives: BOS + prompt A + generated A
    + B's text without BOS."""
    ids = (first_prompt if isinstance(first_prompt, list) else s.tokenize(first_prompt, True))
    more = second if isinstance(second, list) else s.tokenize(second, False)
    return s.client.complete(ids + first.token_ids + more, **opts), 1 + len(more)


def check_redis(binary, model, redis):
    a = Server(binary, model, f"--session-store={redis.url}", "--max-slots=4")
    b = Server(binary, model, f"--session-store={redis.url}", "--max-slots=4")
    try:
        opts = dict(max_new_tokens=10, **GREEDY)
        first = a.client.complete("And God said", keep_session=True, **opts)
        handle = first.finished.session_handle
        want, _ = continue_reference(a, "And God said", first, " and the LORD", **opts)
        got_b = b.client.complete(" and the LORD", session=handle, keep_session=True, **opts)
        check(got_b.token_ids == want.token_ids and got_b.finished.session_handle == handle,
              "redis store: replica B continues replica A's session = whole conversation",
              {"session": handle}, got_b.token_ids, want.token_ids)
        got_a = a.client.complete(" Then", session=handle, **opts)
        whole = (a.tokenize("And God said", True) + first.token_ids
                 + a.tokenize(" and the LORD", False) + got_b.token_ids + a.tokenize(" Then", False))
        want = a.client.complete(whole, **opts)
        check(got_a.token_ids == want.token_ids, "redis store: A sees B's kept turn",
              {"session": handle}, got_a.token_ids, want.token_ids)
        blob = a.client.export_session(handle)
        new = b.client.import_session(blob)
        check(b.client.complete(" Then", session=new, **opts).token_ids == got_a.token_ids,
              "redis store: export on A, import on B continues alike", {"import": len(blob)},
              "", "same")
        expect_refusal("redis store: unknown handle NOT_FOUND", {"session": "ss-" + "1" * 32},
                       lambda: b.client.complete("x", session="ss-" + "1" * 32, max_new_tokens=2),
                       "NotFoundError")
        stream = a.client.generate(" And", session=handle, keep_session=True, max_new_tokens=3000,
                                   ignore_eos=True, **GREEDY)
        iterator = iter(stream)
        next(iterator)
        expect_refusal("redis store: a session running on A is refused on B",
                       {"session": handle, "replica": "B"},
                       lambda: b.client.complete(" x", session=handle, max_new_tokens=2),
                       "FailedPreconditionError", "in use")
        stream.cancel()
        list(iterator)
        a.wait_slots_free("a cancelled continuation (redis store)", {"session": handle})
        redis.stop()
        expect_refusal("redis store down: a continuation is UNAVAILABLE naming the store",
                       {"redis": "killed"}, lambda: b.client.complete(
                           " x", session=handle, max_new_tokens=2, timeout=10),
                       "UnavailableError", redis.url)
        plain = a.client.complete("And", max_new_tokens=2, timeout=10, **GREEDY)
        check(plain.finished.generated_tokens == 2, "redis store down: plain requests still served",
              {"prompt": "And"}, plain.finished, "2 tokens")
    finally:
        a.stop()
        b.stop()


def check_ttl(binary, model):
    s = Server(binary, model, "--session-ttl=1s", "--max-slots=2")
    try:
        h = s.client.complete("And", keep_session=True, max_new_tokens=2).finished.session_handle
        time.sleep(1.3)
        expect_refusal("an expired session: NOT_FOUND", {"ttl": "1s", "after": 1.3},
                       lambda: s.client.complete("x", session=h, max_new_tokens=2), "NotFoundError")
        expect_refusal("export of an expired session: NOT_FOUND", {"ttl": "1s"},
                       lambda: s.client.export_session(h), "NotFoundError")
    finally:
        s.stop()


def check_softmax(binary, models):
    s = Server(binary, models + "/kjv-softmax-c512", "--max-slots=3")
    t = Server(binary, models + "/kjv-softmax-c512", "--max-slots=2")
    try:
        c, opts = s.client, dict(max_new_tokens=8, **GREEDY)
        first = c.complete(GENESIS, keep_session=True, **opts)
        want, _ = continue_reference(s, GENESIS, first, " and", **opts)
        blob = c.export_session(first.finished.session_handle)
        got = t.client.complete(" and", session=t.client.import_session(blob), **opts)
        check(got.token_ids == want.token_ids,
              "softmax (KV cache): export, import on another server, continue = whole text",
              {"blob bytes": len(blob)}, got.token_ids, want.token_ids)
        # The context limit: 506 prompt tokens leave 6 positions, so 7 tokens (the last one
        # pending, never fed); a session kept there refuses a continuation, naming the context.
        ids = [1] + [260] * 505
        full = c.complete(ids, max_new_tokens=50, ignore_eos=True, keep_session=True, **GREEDY)
        check(full.finished.finish_reason == "length" and len(full.token_ids) == 7,
              "softmax: generation stops (length) at the longest context",
              {"prompt_len": len(ids), "max_new_tokens": 50}, full.token_ids, "7 tokens, length")
        expect_refusal("softmax: continuing a session at the context end is refused",
                       {"session": "full"}, lambda: c.complete(
                           " and", session=full.finished.session_handle, max_new_tokens=2),
                       "InvalidArgumentError", "context")
        s.wait_slots_free("softmax context end", {"prompt_len": len(ids)})
    finally:
        s.stop()
        t.stop()
