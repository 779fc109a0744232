#!/usr/bin/python3
"""Soak run (not CI): one real slotserve-server under steady load for a long time.

  bench/soak.py [--minutes 30] [--window-minutes 5] [--load 0.8] [--model DIR] [--build DIR]

1. Starts slotserve-server on loopback ports the kernel picks.
2. Measures capacity: a closed loop keeps every state slot busy with the soak's own request mix
   (no cancels) for --capacity-seconds; capacity = finished requests per second.
3. Sends Poisson arrivals at --load x capacity for --minutes through the real Python client
   (grpc.aio). The mix: plain requests; requests the client cancels after a random number of
   tokens; requests with a random deadline (some expire mid-stream, some do not); requests
   sharing one long prefix (prefix-state hits and evictions); and requests the server must refuse
   (a bad field). Every request samples with its own seed. An encoder-decoder model's requests
   each carry a random source, and some search with beams (request_plan).
4. Every --sample-seconds: the server's resident memory (/proc/PID/status VmRSS) and its slot,
   running and queued gauges (/metrics).
5. After the last arrival: waits for every request, then checks that no slot is held
   (GetModelInfo slots_free == slots_total, requests running and queued 0, the slots-used gauge
   0), SIGTERMs the server and checks it drained and exited 0.

Writes a Markdown report (per window: requests by ending, p50/p99 inter-token latency, RSS at
the window's end) and a CSV of the samples. Exit status 1 when a slot leaked, an unexpected error
happened or the server did not exit cleanly.
"""

import argparse
import asyncio
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Endings a request of the soak's mix can have; anything else is an unexpected error.
EXPECTED_ENDINGS = ("finished", "cancelled", "deadline", "refused_as_meant", "overloaded")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--window-minutes", type=float, default=5.0)
    parser.add_argument("--load", type=float, default=0.8, help="fraction of measured capacity")
    parser.add_argument("--capacity-seconds", type=float, default=30.0)
    parser.add_argument("--sample-seconds", type=float, default=10.0)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--model", default=os.path.join(ROOT, "models/trained/kjv-abc-m32"))
    parser.add_argument("--max-slots", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench/results/soak.md"))
    parser.add_argument("--csv", default=os.path.join(ROOT, "bench/results/soak_samples.csv"))
    return parser.parse_args()


class Server:
    """slotserve-server as a child process; its addresses are read from its start-up lines.

    `extra_flags` are appended to the command line; with --http-listen, `http_address` is the
    OpenAI-compatible API's host:port (bench/http_soak.py)."""

    def __init__(self, args, extra_flags=()):
        self.log = tempfile.NamedTemporaryFile(prefix="slotserve-soak-", suffix=".log",
                                               delete=False)
        binary = os.path.join(args.build, "server/slotserve-server")
        self.process = subprocess.Popen(
            [binary, f"--model={args.model}", "--backend=cpu", f"--threads={args.threads}",
             "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
             f"--max-slots={args.max_slots}", "--max-queued=4096", "--drain-timeout=20s",
             *extra_flags],
            stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            text = open(self.log.name, encoding="utf-8", errors="replace").read()
            match = re.search(r"listening on ([0-9.]+:[0-9]+), metrics on (http://\S+)", text)
            if match:
                self.address, self.metrics_url = match.group(1), match.group(2)
                http = re.search(r"HTTP API on https?://([0-9.]+:[0-9]+)/v1", text)
                self.http_address = http.group(1) if http else None
                self.start_line = text.strip().splitlines()[-1]
                return
            if self.process.poll() is not None:
                sys.exit(f"soak: the server exited at start-up:\n{text}")
            time.sleep(0.2)
        sys.exit("soak: the server did not start within 120 s")

    def rss_mib(self):
        with open(f"/proc/{self.process.pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def gauges(self):
        text = urllib.request.urlopen(self.metrics_url, timeout=5).read().decode()
        values = {}
        for name in ("slotserve_state_slots_used", "slotserve_requests_running",
                     "slotserve_requests_queued"):
            match = re.search(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M)
            values[name] = float(match.group(1)) if match else float("nan")
        return values

    def stop(self):
        """SIGTERM, then the exit status (None when it had to be killed)."""
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return None


class Stats:
    def __init__(self):
        self.endings = []  # (time, ending)
        self.gaps = []  # (time, seconds between two token messages of one stream)
        self.unexpected = []  # (time, description)
        self.samples = []  # (time, rss MiB, slots used, running, queued)


def request_plan(rng, info, shared_prefix, capacity_run):
    """One request of the mix: (prompt ids, options, action); action is ("plain",),
    ("cancel", after_n_tokens), ("deadline", seconds) or ("bad",). For an encoder-decoder
    model every request has a source of 4 to max_source_tokens random ids, the prompt is a
    target prefix of 0-8 ids (none at 0), and 10% search with beams of width 2-4."""
    vocab_size = info.vocab_size
    length = rng.randint(4, 192)
    prompt = [rng.randrange(4, vocab_size) for _ in range(length)]
    if rng.random() < 0.2:
        prompt = shared_prefix + prompt[:32]
    options = dict(max_new_tokens=rng.randint(8, 96), temperature=rng.choice([0.0, 0.7, 1.0]),
                   top_p=rng.choice([None, 0.9]), seed=rng.randrange(1 << 31), ignore_eos=True)
    if info.is_seq2seq:
        prompt = prompt[:rng.randint(0, 8)] or None
        options["source"] = [rng.randrange(4, vocab_size)
                             for _ in range(rng.randint(4, info.max_source_tokens))]
        if not capacity_run and rng.random() < 0.1:
            width = rng.randint(2, 4)
            options.update(beam_width=width, n_best=rng.randint(1, width), temperature=0.0,
                           top_p=None, seed=None)
    if capacity_run:
        return prompt, options, ("plain",)
    roll = rng.random()
    if roll < 0.10:
        return prompt, options, ("cancel", rng.randint(1, options["max_new_tokens"]))
    if roll < 0.20:
        return prompt, options, ("deadline", rng.uniform(0.05, 2.0))
    if roll < 0.23:
        options["temperature"] = -1.0  # INVALID_ARGUMENT by design
        return prompt, options, ("bad",)
    return prompt, options, ("plain",)


async def run_request(client, plan, stats):
    import slotserve
    prompt, options, action = plan
    timeout = action[1] if action[0] == "deadline" else 600
    tokens = 0
    last = None
    try:
        async with client.generate(prompt, timeout=timeout, **options) as stream:
            async for chunk in stream:
                now = time.monotonic()
                if last is not None:
                    stats.gaps.append((now, (now - last) / max(len(chunk.token_ids), 1)))
                last = now
                tokens += len(chunk.token_ids)
                if action[0] == "cancel" and tokens >= action[1]:
                    stream.cancel()
                    stats.endings.append((now, "cancelled"))
                    return
        ending = "finished"
        if action[0] == "bad":
            stats.unexpected.append((time.monotonic(), "a bad request was accepted"))
            ending = "unexpected"
    except slotserve.DeadlineExceededError:
        ending = "deadline" if action[0] == "deadline" else "unexpected"
    except slotserve.InvalidArgumentError as error:
        ending = "refused_as_meant" if action[0] == "bad" else "unexpected"
        if ending == "unexpected":
            stats.unexpected.append((time.monotonic(), f"INVALID_ARGUMENT: {error}"))
    except slotserve.ResourceExhaustedError:
        ending = "overloaded"
    except slotserve.SlotServeError as error:
        ending = "unexpected"
        stats.unexpected.append((time.monotonic(), f"{type(error).__name__}: {error}"))
    stats.endings.append((time.monotonic(), ending))


async def measure_capacity(client, args, info, shared_prefix):
    """Finished requests per second with every slot kept busy."""
    rng = random.Random(args.seed + 1)
    stats = Stats()
    stop_at = time.monotonic() + args.capacity_seconds

    async def worker():
        while time.monotonic() < stop_at:
            await run_request(client, request_plan(rng, info, shared_prefix, True), stats)

    started = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(args.max_slots)))
    finished = sum(1 for _, ending in stats.endings if ending == "finished")
    return finished / (time.monotonic() - started), stats.unexpected


async def sampler(server, stats, stop_event, interval):
    while not stop_event.is_set():
        gauges = server.gauges()
        stats.samples.append((time.monotonic(), server.rss_mib(),
                              gauges["slotserve_state_slots_used"],
                              gauges["slotserve_requests_running"],
                              gauges["slotserve_requests_queued"]))
        try:
            await asyncio.wait_for(stop_event.wait(), timeout=interval)
        except asyncio.TimeoutError:
            pass


async def soak(args, server):
    import slotserve
    async with slotserve.AsyncClient(server.address) as client:
        info = await client.info()
        rng = random.Random(args.seed)
        shared_prefix = [rng.randrange(4, info.vocab_size) for _ in range(256)]
        capacity, capacity_errors = await measure_capacity(client, args, info, shared_prefix)
        rate = capacity * args.load
        print(f"soak: capacity {capacity:.2f} requests/s; arrivals at {rate:.2f}/s for "
              f"{args.minutes} min", file=sys.stderr)
        stats = Stats()
        stats.unexpected.extend(capacity_errors)
        stop_event = asyncio.Event()
        start = time.monotonic()
        sampling = asyncio.create_task(sampler(server, stats, stop_event, args.sample_seconds))
        tasks = set()
        end = start + args.minutes * 60
        next_arrival = start
        while next_arrival < end:
            await asyncio.sleep(max(0.0, next_arrival - time.monotonic()))
            task = asyncio.create_task(
                run_request(client, request_plan(rng, info, shared_prefix, False), stats))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            next_arrival += rng.expovariate(rate)
        if tasks:
            await asyncio.gather(*tasks)
        await asyncio.sleep(1.0)
        stop_event.set()
        await sampling
        final = await client.info()
        gauges = server.gauges()
        return start, capacity, rate, stats, final, gauges


def percentile(values, fraction):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def report(args, server, start, capacity, rate, stats, final, gauges, exit_status):
    window = args.window_minutes * 60
    windows = max(1, int(round(args.minutes * 60 / window)))
    rows = []
    for index in range(windows):
        lo, hi = start + index * window, start + (index + 1) * window
        endings = [e for t, e in stats.endings if lo <= t < hi]
        gaps = [g * 1000 for t, g in stats.gaps if lo <= t < hi]
        rss = [s[1] for s in stats.samples if lo <= s[0] < hi]
        counts = {name: endings.count(name) for name in EXPECTED_ENDINGS}
        rows.append((f"{index * args.window_minutes:g}–{(index + 1) * args.window_minutes:g}",
                     len(endings), counts, len(endings) - sum(counts.values()),
                     percentile(gaps, 0.5), percentile(gaps, 0.99),
                     rss[-1] if rss else float("nan"), max(rss) if rss else float("nan")))
    leaked = final.slots_total - final.slots_free
    lines = [
        "# Soak run", "",
        f"Command: `bench/soak.py --minutes {args.minutes:g} --window-minutes "
        f"{args.window_minutes:g} --load {args.load:g} --max-slots {args.max_slots} "
        f"--threads {args.threads} --model {os.path.relpath(args.model, ROOT)}`", "",
        f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. Machine: "
        f"{os.cpu_count()} cores. Server start-up line:", "",
        "```", server.start_line.replace(ROOT + "/", ""), "```", "",
        f"Capacity (closed loop, every slot busy, {args.capacity_seconds:g} s): "
        f"{capacity:.2f} requests/s; soak arrivals (Poisson): {rate:.2f} requests/s "
        f"({args.load:.0%}). Mix: 10% cancelled by the client after a random number of tokens, "
        "10% with a random deadline of 0.05–2 s, 3% with a bad field (must be refused), 20% "
        "sharing a 256-token prefix, the rest plain; 8–96 new tokens, 4–192 prompt tokens."
        + (" Encoder-decoder model: every request has a source of 4 to max_source_tokens "
           "random ids, the prompt is a target prefix of 0–8 ids, 10% search with beams of "
           "width 2–4." if final.is_seq2seq else ""), "",
        "| minutes | requests | finished | cancelled | deadline | refused (meant) | overloaded |"
        " unexpected | inter-token p50 ms | p99 ms | RSS at end MiB | RSS max MiB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, total, counts, unexpected, p50, p99, rss_end, rss_max in rows:
        lines.append(f"| {name} | {total} | {counts['finished']} | {counts['cancelled']} | "
                     f"{counts['deadline']} | {counts['refused_as_meant']} | "
                     f"{counts['overloaded']} | {unexpected} | {p50:.2f} | {p99:.2f} | "
                     f"{rss_end:.1f} | {rss_max:.1f} |")
    after_warmup = [s[1] for s in stats.samples if s[0] >= start + window]
    growth = (max(after_warmup) - min(after_warmup)) if after_warmup else float("nan")
    lines += [
        "",
        f"RSS after the first window: min {min(after_warmup, default=float('nan')):.1f} MiB, "
        f"max {max(after_warmup, default=float('nan')):.1f} MiB (spread {growth:.1f} MiB).",
        f"After the last request: slots free {final.slots_free} of {final.slots_total} "
        f"(leaked: {leaked}), requests running {final.requests_running}, queued "
        f"{final.requests_queued}; gauge slots used {gauges['slotserve_state_slots_used']:g}.",
        f"Unexpected errors: {len(stats.unexpected)}"
        + "".join(f"\n- {text}" for _, text in stats.unexpected[:20]),
        f"Server exit status after SIGTERM: {exit_status}.",
    ]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    with open(args.csv, "w", encoding="utf-8") as out:
        out.write("seconds,rss_mib,slots_used,requests_running,requests_queued\n")
        for t, rss, used, running, queued in stats.samples:
            out.write(f"{t - start:.1f},{rss:.1f},{used:g},{running:g},{queued:g}\n")
    print("\n".join(lines))
    return leaked == 0 and not stats.unexpected and exit_status == 0 and \
        final.requests_running == 0 and final.requests_queued == 0


def main():
    args = parse_args()
    sys.path.insert(0, os.path.join(args.build, "clients/python"))
    server = Server(args)
    try:
        result = asyncio.run(soak(args, server))
    except BaseException:
        server.stop()
        raise
    exit_status = server.stop()
    ok = report(args, server, *result, exit_status)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
