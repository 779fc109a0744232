"""Helpers of metrics_invariants_test.py: the Prometheus text parsed (and its exposition format
checked on the way), a real server on loopback with its metrics port, what the clients of one
scenario saw, and the comparison of a scenario's metric deltas with it.

Nothing here sleeps for a fixed time that could be too short: every wait polls a condition
against a generous deadline (WAIT), so that a loaded machine or a sanitizer build (several
times slower) only makes the test slower, never wrong; a deadline that passes is reported as a
violation by the check that waited.
"""

import collections
import http.client
import json
import re
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from grpc_invariant_checks import check, short, slotserve, terminate
from loopback_server import fail

# How long a condition may take to hold: far beyond what a healthy server needs.
WAIT = 120.0
# max_new_tokens of a request that must still run when the test ends it (cancel, deadline, a
# slot held): the servers start with --max-new-tokens-limit=LONG so that no machine is fast
# enough for it to end on its own.
LONG = 1_000_000
STOPS = ("eos", "stop_token", "stop_sequence")  # what HTTP reports as "stop"


def wait_until(condition, seconds=WAIT):
    """Polls condition() until it returns something true or `seconds` pass; returns its last
    value (false when the deadline passed)."""
    deadline = time.time() + seconds
    while True:
        result = condition()
        if result or time.time() > deadline:
            return result
        time.sleep(0.02)


# ---------------------------------------------------------------- Prometheus text
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"\s*(,|$)')


def parse_labels(text):
    labels, pos = [], 0
    while pos < len(text):
        m = LABEL.match(text, pos)
        if not m or m.end() == pos:
            return None
        labels.append((m.group(1), m.group(2)))
        pos = m.end()
    return tuple(sorted(labels))


def exposition_problems(types, series):
    """A histogram's buckets must be cumulative and its +Inf bucket equal its _count."""
    problems = []
    for family, kind in types.items():
        if kind != "histogram":
            continue
        groups = collections.defaultdict(list)
        for (name, labels), count in series.items():
            if name == family + "_bucket":
                le = dict(labels).get("le")
                rest = tuple(x for x in labels if x[0] != "le")
                groups[rest].append((float("inf") if le == "+Inf" else float(le), count))
        for rest, buckets in groups.items():
            buckets.sort()
            counts = [c for _, c in buckets]
            if counts != sorted(counts) or buckets[-1][0] != float("inf") or \
                    buckets[-1][1] != series.get((family + "_count", rest)):
                problems.append(f"{family}{dict(rest)}: buckets not cumulative or +Inf != _count")
    return problems


def parse_metrics(text, where, validate=True):
    """{(name, labels): value}; with `validate`, one check of the exposition format: every
    family with # HELP and # TYPE, counters named ..._total, unique series, sane histograms."""
    helps, types, series, problems = {}, {}, {}, []
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            parts = line.split(" ", 3)
            if len(parts) < 4:
                problems.append(f"short comment line {line!r}")
                continue
            (helps if parts[1] == "HELP" else types)[parts[2]] = parts[3]
            continue
        if line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        labels = parse_labels(m.group(3) or "") if m else None
        if labels is None:
            problems.append(f"unparsable sample {line!r}")
            continue
        name = m.group(1)
        try:
            number = float(m.group(4))
        except ValueError:
            problems.append(f"bad value in {line!r}")
            continue
        family = name
        for suffix in ("_bucket", "_sum", "_count"):
            if name.endswith(suffix) and types.get(name[:-len(suffix)]) == "histogram":
                family = name[:-len(suffix)]
        if family not in types or family not in helps:
            problems.append(f"{name}: no # HELP/# TYPE for family {family}")
        if types.get(family) == "counter" and not family.endswith("_total"):
            problems.append(f"counter {family} does not end in _total")
        if types.get(family) not in ("counter", "gauge", "histogram", "summary", "untyped"):
            problems.append(f"{family}: type {types.get(family)!r}")
        if len({k for k, _ in labels}) != len(labels):
            problems.append(f"repeated label name in {line!r}")
        if (name, labels) in series:
            problems.append(f"duplicate series {line!r}")
        series[(name, labels)] = number
    if validate:
        problems += exposition_problems(types, series)
        check(not problems, f"valid Prometheus exposition ({where})", "GET /metrics",
              "; ".join(problems[:5]), "every family with HELP and TYPE, unique series, ..._total")
    return series


def value(m, name, **labels):
    return m.get((name, tuple(sorted(labels.items()))), 0.0)


def outcome_deltas(before, after):
    """slotserve_requests_total{outcome} deltas, eos / stop_token / stop_sequence as "stop"
    (what HTTP reports; the clients' side is grouped the same way, Seen.choice)."""
    deltas = collections.Counter()
    for (name, labels), count in after.items():
        if name == "slotserve_requests_total":
            outcome = dict(labels)["outcome"]
            deltas["stop" if outcome in STOPS else outcome] += count - before.get((name, labels), 0)
    return +deltas


# ---------------------------------------------------------------- a server
class Server:
    """slotserve-server on loopback, gRPC, HTTP and metrics on port 0 (the ports read from its
    start-up lines; its log goes to a file, which never fills as a pipe would), with the
    Python client and slotserve-cli pointed at it."""

    def __init__(self, binary, cli, model, *flags):
        self.cli_binary = cli
        self.log = tempfile.NamedTemporaryFile("w+", prefix="metrics-inv-", suffix=".log")
        self.process = subprocess.Popen(
            [str(binary), f"--model={model}", "--listen=127.0.0.1:0",
             "--metrics-listen=127.0.0.1:0", "--http-listen=127.0.0.1:0", *flags],
            stdout=subprocess.DEVNULL, stderr=self.log)
        patterns = (r"HTTP API on http://127\.0\.0\.1:([0-9]+)",
                    r"listening on 127\.0\.0\.1:([0-9]+)",
                    r"metrics on http://127\.0\.0\.1:([0-9]+)")

        def ports():
            found = [re.search(p, Path(self.log.name).read_text()) for p in patterns]
            return self.process.poll() is not None or all(found) and found

        found = wait_until(ports)
        if not isinstance(found, list):
            self.process.kill()
            fail(f"the server did not start:\n{Path(self.log.name).read_text()}")
        self.http_port, self.grpc_port, self.metrics_port = (int(p.group(1)) for p in found)
        self.target = f"127.0.0.1:{self.grpc_port}"
        self.client = slotserve.Client(self.target, timeout=WAIT)
        self.info = self.client.info()

    def get(self, port, path):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read().decode()

    def scrape(self, validate=False):
        return parse_metrics(self.get(self.metrics_port, "/metrics")[1], "metrics port",
                             validate)

    def post(self, path, body, raw=None):
        """(status, JSON answer), a 200 stream's events as a list."""
        c = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=WAIT)
        c.request("POST", path, raw if raw is not None else json.dumps(body),
                  {"Content-Type": "application/json"})
        r = c.getresponse()
        text = r.read().decode()
        if body and body.get("stream") and r.status == 200:
            return r.status, [json.loads(line[6:]) for line in text.splitlines()
                              if line.startswith("data: ") and line != "data: [DONE]"]
        try:
            return r.status, json.loads(text)
        except ValueError:
            return r.status, text

    def drop_http_stream(self, body):
        """Opens a streaming completion, reads until its first event, and hangs up."""
        sock = socket.create_connection(("127.0.0.1", self.http_port), timeout=WAIT)
        data = json.dumps(body).encode()
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                     b"application/json\r\nContent-Length: " + str(len(data)).encode() +
                     b"\r\n\r\n" + data)
        got = b""
        while b"data: " not in got:
            got += sock.recv(4096)
        sock.close()

    def cli(self, *args):
        p = subprocess.run([str(self.cli_binary), "--server", self.target, *args],
                           capture_output=True, text=True, timeout=WAIT)
        return p.returncode, p.stdout, p.stderr

    def gauge(self, name):
        return value(self.scrape(), "slotserve_" + name)

    def idle(self, what):
        """The scrape once nothing runs, waits or holds a slot; a violation if that never comes."""
        last = {}

        def idle():
            last["m"] = self.scrape()
            return not any(value(last["m"], "slotserve_" + k) for k in
                           ("requests_running", "requests_queued", "state_slots_used"))

        wait_until(idle)
        busy = {k: value(last["m"], "slotserve_" + k)
                for k in ("requests_running", "requests_queued", "state_slots_used")}
        check(not any(busy.values()), f"gauges back to 0 after {what}", what, busy, "all 0")
        return last["m"]

    def engine_steps(self, count):
        """Waits for `count` more decode steps (while some request runs): whatever the engine
        does at its next step (dropping a cancelled or late request) has then been done."""
        steps = lambda: value(self.scrape(), "slotserve_step_duration_seconds_count",  # noqa
                              phase="decode")
        start = steps()
        return check(wait_until(lambda: steps() >= start + count), "engine keeps stepping",
                     f"{count} decode steps", "none within the wait", f"{count} steps")

    def stop(self):
        self.client.close()
        terminate(self.process, timeout=30)


# ---------------------------------------------------------------- what the clients saw
class Seen:
    """What the clients of one scenario saw, counted as the metrics should count it (README,
    "Metrics"): each choice of n or best_of as it ends, with its generated tokens and its own
    duration, time-to-first-token and inter-token samples; its prompt once; a beam search once,
    with its best hypothesis's tokens."""

    def __init__(self):
        self.outcomes = collections.Counter()
        self.prompt = self.generated = 0
        self.first_tokens = self.admitted = self.lookups = self.encodes = 0
        self.timing = True  # False: the latency histograms' counts are not known (cut off)
        self.decode_rows_exact = True  # False: a beam search decodes a row per hypothesis
        self.generated_at_least = False  # a cut-off request made more than its client read

    def choice(self, reason, generated):
        self.outcomes["stop" if reason in STOPS else reason] += 1
        self.generated += generated
        self.first_tokens += generated > 0

    def request(self, prompt, lookup=True, encode=False):
        self.prompt += prompt
        self.admitted += 1
        self.lookups += lookup
        self.encodes += encode

    def cut_off(self, outcome, prompt, read_tokens=0):
        """A request that ran and was ended by a cancel or its deadline."""
        self.timing, self.generated_at_least = False, True
        self.outcomes[outcome] += 1
        self.generated += read_tokens
        self.request(prompt)

    def http_answer(self, status, body, sent, prompts=1, encode=False):
        """A whole (or streamed) HTTP answer of `prompts` prompts: its choices and usage."""
        if not check(status == 200, "HTTP status", sent, f"{status} {short(body)}", 200):
            return None
        events = body if isinstance(body, list) else [body]
        reasons, usage = {}, None
        for event in events:
            usage = event.get("usage") or usage
            for c in event.get("choices", []):
                if c.get("finish_reason"):
                    reasons[c["index"]] = c["finish_reason"]
        if not check(usage is not None, "usage present", sent, short(events[-1]), "usage"):
            return None
        for reason in reasons.values():
            self.outcomes[reason] += 1
            self.first_tokens += 1
        self.generated += usage["completion_tokens"]
        self.prompt += usage["prompt_tokens"]
        self.admitted += prompts
        self.lookups += 0 if encode else prompts
        self.encodes += prompts if encode else 0
        return reasons

    def discarded_best_of(self, count, tokens_each):
        """best_of's choices that the answer left out: each ended (at max_tokens, the request
        ignoring eos) and counts as a request with its generated tokens."""
        for _ in range(count):
            self.choice("length", tokens_each)


def compare(what, before, after, seen, steps=True):
    """The deltas of one scenario against what its clients saw."""
    d = lambda name, **l: value(after, name, **l) - value(before, name, **l)  # noqa: E731
    got = outcome_deltas(before, after)
    check(got == +seen.outcomes, f"{what}: slotserve_requests_total{{outcome}} deltas", what,
          dict(got), dict(+seen.outcomes))
    check(d("slotserve_prompt_tokens_total") == seen.prompt,
          f"{what}: slotserve_prompt_tokens_total delta", what,
          d("slotserve_prompt_tokens_total"), f"{seen.prompt} (usage / Finished, once a request)")
    g = d("slotserve_generated_tokens_total")
    check(g >= seen.generated if seen.generated_at_least else g == seen.generated,
          f"{what}: slotserve_generated_tokens_total delta", what, g,
          f"{'>= ' if seen.generated_at_least else ''}{seen.generated} (every choice's tokens)")
    if not steps:
        return
    check(d("slotserve_step_duration_seconds_count", phase="encode") == seen.encodes,
          f"{what}: step_duration_seconds_count{{phase=encode}} delta", what,
          d("slotserve_step_duration_seconds_count", phase="encode"), seen.encodes)
    lookups = d("slotserve_prefix_cache_hits_total") + d("slotserve_prefix_cache_misses_total")
    check(lookups == seen.lookups, f"{what}: prefix cache hits + misses delta", what, lookups,
          f"{seen.lookups} (one lookup per admitted decoder-only request without echo scoring)")
    decode_steps = d("slotserve_step_duration_seconds_count", phase="decode")
    check(d("slotserve_batch_size_count") == decode_steps,
          f"{what}: batch_size_count == decode step count", what,
          d("slotserve_batch_size_count"), decode_steps)
    if seen.admitted:
        check(d("slotserve_step_duration_seconds_count", phase="prefill") >= seen.admitted,
              f"{what}: prefill steps >= admitted requests", what,
              d("slotserve_step_duration_seconds_count", phase="prefill"), f">= {seen.admitted}")
    if not seen.timing:
        return
    ended = sum(seen.outcomes[k] for k in ("length", "stop", "cancelled", "deadline_exceeded"))
    for name, expected in (("queue_time_seconds", seen.admitted),
                           ("time_to_first_token_seconds", seen.first_tokens),
                           ("inter_token_latency_seconds", seen.generated - seen.first_tokens),
                           ("request_duration_seconds", ended)):
        check(d(f"slotserve_{name}_count") == expected, f"{what}: slotserve_{name}_count delta",
              what, d(f"slotserve_{name}_count"), expected)
    rows, tokens = d("slotserve_batch_size_sum"), seen.generated - seen.first_tokens
    check(rows == tokens if seen.decode_rows_exact else rows >= tokens,
          f"{what}: batch_size_sum delta (decode rows)", what, rows,
          f"{'' if seen.decode_rows_exact else '>= '}{tokens} (one row per token after the first)")


def scenario(s, what, body):
    """Runs body(seen) on an idle server and compares the deltas once it is idle again (the
    engine counts a request's end before its client hears of it, and a cut-off request's end
    before its slot shows free)."""
    s.idle(f"before {what}")
    before, seen = s.scrape(validate=True), Seen()
    body(seen)
    s.idle(what)
    compare(what, before, s.scrape(validate=True), seen)


def phase(s, what, body, steps_after=2):
    """A scenario while a request holds the only slot (the server never idle): counts only,
    compared once as many endings and prompt tokens are counted as the clients saw (a request
    dropped from the queue is counted at the engine's next step) and `steps_after` more engine
    steps have added nothing (a refused batch must leave nothing to count later)."""
    before, seen = s.scrape(validate=True), Seen()
    seen.timing, seen.generated_at_least = False, True
    body(seen)

    def counted():  # totals, not labels: a wrong outcome is reported at once, not waited on
        m = s.scrape()
        return sum(outcome_deltas(before, m).values()) >= sum(seen.outcomes.values()) and \
            value(m, "slotserve_prompt_tokens_total") >= \
            value(before, "slotserve_prompt_tokens_total") + seen.prompt

    wait_until(counted)
    if steps_after:
        s.engine_steps(steps_after)
    compare(what, before, s.scrape(validate=True), seen, steps=False)


def grpc_stream(s, seen, prompt, **options):
    """A gRPC Generate stream read whole: each choice's Finished against its streamed ids."""
    stream = s.client.generate(prompt, **options)
    chunks = list(stream)
    for f in stream.finished_choices:
        ids = [i for c in chunks if c.choice_index == f.choice_index for i in c.token_ids]
        check(len(ids) == f.generated_tokens, "gRPC Finished.generated_tokens == ids streamed",
              options, f.generated_tokens, len(ids))
        seen.choice(f.finish_reason, f.generated_tokens)
    seen.request(stream.finished_choices[0].prompt_tokens, lookup=prompt is not None and
                 "source" not in options, encode="source" in options)


def cli_summary(seen, err, what, lookup=True, encode=False):
    """The CLI's summary line on stderr, "[reason after N tokens (prompt P), ...]", counted."""
    m = re.search(r"\[(\w+) after (\d+) tokens \(prompt (\d+)\)", err)
    if check(m, "CLI summary line", what, err, "[reason after N tokens (prompt P), ...]"):
        seen.choice(m.group(1), int(m.group(2)))
        seen.request(int(m.group(3)), lookup=lookup, encode=encode)
        return int(m.group(3))
    return None


def check_gauges(s, m):
    """The idle gauges against GetModelInfo."""
    info = s.client.info()
    for name, expected in (("state_slots_total", info.slots_total),
                           ("state_bytes_per_request", info.state_bytes_per_request),
                           ("requests_running", 0), ("requests_queued", 0),
                           ("state_slots_used", 0)):
        check(value(m, "slotserve_" + name) == expected, f"gauge slotserve_{name}",
              "GetModelInfo", value(m, "slotserve_" + name), expected)
    parts = (info.decoder_state_bytes_per_request, info.cross_memory_bytes_per_request) \
        if info.decoder_state_bytes_per_request else (info.state_bytes_per_request, 0)
    for part, expected in zip(("decoder_self", "cross_memory"), parts):
        got = value(m, "slotserve_state_part_bytes_per_request", part=part)
        check(got == expected, f"state_part_bytes_per_request{{part={part}}}", "GetModelInfo",
              got, expected)
    build = [dict(labels) for (name, labels) in m if name == "slotserve_build_info"]
    check(len(build) == 1 and build[0].get("model") == info.model, "build_info model label",
          "GetModelInfo", build, info.model)
