#!/usr/bin/env python3
"""Issue 20's scale benchmark: an fla checkpoint of GSA-1.3B's shape (random weights, fla's
layout, BF16, sharded; written by python/slotserve_ref/fla/make_scale_checkpoint.py) and its
int8 twin (slotserve-quantize), each

  * started as a real slotserve-server: seconds until it listens (config, shards, checks,
    weights to memory), resident memory after start-up and at peak (VmRSS / VmHWM);
  * asked through gRPC (the Python client) for 16 tokens by 4 concurrent requests (prompt of 32
    token ids each): time to first token and generated tokens/s as a user sees them;
  * decoded by the engine at batch 1/8/32 (slotserve-bench --suite=decode, medians);

and the state one request holds next to a softmax transformer of the same width and depth
(K and V per token per layer, BF16) at 2k/8k/32k tokens of context.

Usage: bench/python/fla_scale.py --build build --out bench/results MODEL_DIR [MODEL_DIR ...]
(bench/fla_scale.sh makes the checkpoints and calls this).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONTEXTS = (2048, 8192, 32768)


def serve_requests(build: Path, port: int, vocab: int, streams: int = 4, new_tokens: int = 16):
    """`streams` concurrent requests for `new_tokens` through the real gRPC API: (median time to first
    token in s, generated tokens per second over the whole round)."""
    sys.path.insert(0, str(build / "clients" / "python"))
    import slotserve  # the project's Python client, generated stubs under the build
    client = slotserve.Client(f"127.0.0.1:{port}")

    def one(i: int):
        prompt = [1] + [(97 * i + 13 * t) % (vocab - 3) + 3 for t in range(31)]
        begin = time.monotonic()
        first, count = None, 0
        for chunk in client.generate(prompt, max_new_tokens=new_tokens, ignore_eos=True):
            if first is None:
                first = time.monotonic() - begin
            count += len(chunk.token_ids)
        return first, count

    begin = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(streams) as pool:
        results = list(pool.map(one, range(streams)))
    seconds = time.monotonic() - begin
    firsts = sorted(r[0] for r in results)
    return firsts[len(firsts) // 2], sum(r[1] for r in results) / seconds


def start_server(build: Path, model: Path, threads: int, slots: int, vocab: int):
    """(seconds until listening, VmRSS bytes, VmHWM bytes, state bytes per request, served:
    (median time to first token, tokens/s) of 4 concurrent gRPC streams)."""
    log = tempfile.TemporaryFile(mode="w+")
    started = time.monotonic()
    proc = subprocess.Popen([str(build / "server" / "slotserve-server"), f"--model={model}",
                             "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
                             f"--threads={threads}", f"--max-slots={slots}"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        while True:
            log.seek(0)
            text = log.read()
            if "listening on" in text:
                break
            if proc.poll() is not None:
                raise RuntimeError(f"slotserve-server exited {proc.returncode}: {text}")
            if time.monotonic() - started > 600:
                raise RuntimeError("slotserve-server did not start in 600 s")
            time.sleep(0.05)
        seconds = time.monotonic() - started
        status = Path(f"/proc/{proc.pid}/status").read_text()
        rss = int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) * 1024
        peak = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) * 1024
        state = int(re.search(r"(\d+) state bytes per request", text).group(1))
        port = int(re.search(r"listening on [^,]*:(\d+),", text).group(1))
        served = serve_requests(build, port, vocab)
        return seconds, rss, peak, state, served
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def decode(build: Path, model: Path, threads: int, batches: str):
    out = subprocess.run([str(build / "bench" / "slotserve-bench"), "--suite=decode",
                          f"--models={model}", f"--batches={batches}", "--context=128",
                          f"--threads={threads}", "--repeats=3", "--steps_per_repeat=4",
                          "--warmup=1"], check=True, capture_output=True, text=True).stdout
    rows = {}
    header = None
    for line in out.splitlines():
        fields = line.split()
        if fields[:3] == ["model", "kind", "batch"]:
            header = fields
        elif header and len(fields) == len(header) and fields[2].isdigit():
            row = dict(zip(header, fields))
            rows[int(row["batch"])] = (float(row["step_ms"]), float(row["tokens_per_s"]))
    return rows


def dtype_of(model: Path) -> str:
    config = json.loads((model / "config.json").read_text())
    single = model / "model.safetensors"
    if single.exists():
        with open(single, "rb") as f:
            length = int.from_bytes(f.read(8), "little")
            header = json.loads(f.read(length))
        kinds = {v["dtype"] for k, v in header.items() if k != "__metadata__"}
        return "int8" if "I8" in kinds else "/".join(sorted(kinds))
    return config.get("torch_dtype", "?")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", type=Path)
    parser.add_argument("--build", type=Path, default=Path("build"))
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--slots", type=int, default=32)
    parser.add_argument("--batches", default="1,8,32")
    args = parser.parse_args()
    rows = []
    for model in args.models:
        config = json.loads((model / "config.json").read_text())
        seconds, rss, peak, state, served = start_server(args.build, model, args.threads,
                                                         args.slots, config["vocab_size"])
        speeds = decode(args.build, model, args.threads, args.batches)
        weight_bytes = sum(p.stat().st_size for p in model.glob("*.safetensors"))
        kv_per_token = 2 * config["num_hidden_layers"] * config["hidden_size"] * 2  # K+V, BF16
        row = {"model": model.name, "dtype": dtype_of(model), "weight_file_bytes": weight_bytes,
               "start_s": round(seconds, 2), "rss_after_start_bytes": rss, "peak_rss_bytes": peak,
               "state_bytes_per_request": state, "grpc_4x16_first_token_s": round(served[0], 3),
               "grpc_4x16_tokens_per_s": round(served[1], 2)}
        for batch, (step_ms, tokens) in sorted(speeds.items()):
            row[f"b{batch}_step_ms"] = step_ms
            row[f"b{batch}_tokens_per_s"] = tokens
        for context in CONTEXTS:
            row[f"softmax_kv_bf16_at_{context}"] = kv_per_token * context
        rows.append(row)
        print(json.dumps(row), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "fla_scale.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    gib = 1 << 30
    mib = 1 << 20
    lines = ["| model | weights | start-up (s) | RSS after start | peak RSS | gRPC 4×16: first token (s), tok/s | "
             + " | ".join(f"b{b} tok/s (step ms)" for b in sorted(speeds)) + " |",
             "|---|---|---:|---:|---:|---:|" + "---:|" * len(speeds)]
    for r in rows:
        cells = [r["model"], f"{r['dtype']}, {r['weight_file_bytes'] / gib:.2f} GiB",
                 f"{r['start_s']:.1f}", f"{r['rss_after_start_bytes'] / gib:.2f} GiB",
                 f"{r['peak_rss_bytes'] / gib:.2f} GiB",
                 f"{r['grpc_4x16_first_token_s']:.2f}, {r['grpc_4x16_tokens_per_s']:.1f}"]
        cells += [f"{r[f'b{b}_tokens_per_s']:.1f} ({r[f'b{b}_step_ms']:.0f})" for b in sorted(speeds)]
        lines.append("| " + " | ".join(cells) + " |")
    state = rows[0]["state_bytes_per_request"]
    lines += ["", "| per request | " + " | ".join(f"{c // 1024}k tokens" for c in CONTEXTS) + " |",
              "|---|" + "---:|" * len(CONTEXTS),
              "| GSA state (any context) | " + " | ".join(
                  f"{state / mib:.0f} MiB" for _ in CONTEXTS) + " |",
              "| softmax KV cache, BF16, same width and depth | " + " | ".join(
                  f"{rows[0][f'softmax_kv_bf16_at_{c}'] / mib:.0f} MiB" for c in CONTEXTS) + " |"]
    (args.out / "fla_scale_table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
