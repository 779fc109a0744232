#!/usr/bin/python3
"""What scoring a prompt costs (not CI): a 512-token prompt sent to a real slotserve-server over
the HTTP API, plain and with echo (without logprobs, with logprobs 0 and 5), one new token each,
interleaved rounds, median time per request. Echo with logprobs asks the model for every prompt
row's logits (the LM head over every row, then a log-softmax per row in double precision);
echo alone only adds the prompt's text to the answer.

  bench/prompt_scoring.py [--build DIR] [--model DIR] [--rounds N]

Prints a Markdown table. The prefix cache is off (--prefix-cache-memory=0) so that every plain
request prefills its whole prompt too.
"""

import argparse
import http.client
import json
import re
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = {
    "plain": {},
    "echo": {"echo": True},
    "echo, logprobs 0": {"echo": True, "logprobs": 0},
    "echo, logprobs 5": {"echo": True, "logprobs": 5},
}


def start_server(binary, model):
    process = subprocess.Popen(
        [binary, f"--model={model}", "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
         "--http-listen=127.0.0.1:0", "--threads=1", "--prefix-cache-memory=0"],
        stderr=subprocess.PIPE, text=True)
    log = ""
    while "listening on" not in log or "HTTP API on" not in log:
        line = process.stderr.readline()
        if not line:
            raise SystemExit(f"the server did not start:\n{log}")
        log += line
    return process, int(re.search(r"HTTP API on http://127\.0\.0\.1:([0-9]+)", log).group(1))


def timed_request(port, prompt, extra):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    body = dict({"prompt": prompt, "max_tokens": 1, "temperature": 0}, **extra)
    start = time.perf_counter()
    connection.request("POST", "/v1/completions", json.dumps(body),
                       {"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    if response.status != 200:
        raise SystemExit(f"HTTP {response.status} for {extra}")
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--model", default=str(ROOT / "models/trained/kjv-abc-m32"))
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    bos = json.loads((Path(args.model) / "config.json").read_text())["bos_id"]
    ruth = (ROOT / "models/trained/kjv-test-ruth-512.ids").read_text().split()
    prompt = [bos] + [int(token) for token in ruth[:511]]
    process, port = start_server(f"{args.build}/server/slotserve-server", args.model)
    try:
        for extra in VARIANTS.values():  # warm-up
            timed_request(port, prompt, extra)
        times = {name: [] for name in VARIANTS}
        for _ in range(args.rounds):
            for name, extra in VARIANTS.items():
                times[name].append(timed_request(port, prompt, extra))
    finally:
        process.terminate()
        process.wait(timeout=60)
    plain = statistics.median(times["plain"])
    print(f"{Path(args.model).name}, {len(prompt)}-token prompt, 1 new token, "
          f"median of {args.rounds} interleaved rounds\n")
    print("| request | ms | × plain |\n|---|---:|---:|")
    for name in VARIANTS:
        median = statistics.median(times[name])
        print(f"| {name} | {median * 1000:.1f} | {median / plain:.2f} |")


if __name__ == "__main__":
    main()
