"""Turns the CSV files scripts/bench.sh wrote into the report: markdown tables (printed and
written to summary.md), each result as a ratio to the machine anchors and the PyTorch
reference measured in the same run, the issue-6 targets with a verdict, and PNG plots (via
plots.py and gnuplot).

  /usr/bin/python3 bench/report/make_report.py --results bench/results [--no-plots]

Every input is optional: a suite that was skipped leaves its tables and targets out (a target
without data is reported as "not measured").
"""

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import plots  # noqa: E402  (this folder, not a package)

KINDS = ("abc", "rfa", "luna", "softmax")
BOUNDED = ("abc", "rfa", "luna")


def read_csv(results, name):
    path = results / f"{name}.csv"
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def read_machine(results):
    info = {}
    path = results / "machine.txt"
    if path.is_file():
        for line in path.read_text().splitlines():
            key, _, value = line.partition("=")
            info[key] = value
    return info


def num(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def fmt(value, digits=1):
    if value is None:
        return "–"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def fmt_bytes(value):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return f"{value:.0f} B"


def table(headers, rows):
    lines = ["| " + " | ".join(headers) + " |",
             "|" + "|".join("---:" if i else "---" for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def lookup(rows, **where):
    """The first row whose columns equal `where` (compared as text)."""
    for row in rows:
        if all(str(row.get(k)) == str(v) for k, v in where.items()):
            return row
    return None


class Report:
    def __init__(self, results):
        self.results = results
        self.machine = read_machine(results)
        self.anchors = {r["anchor"]: num(r["value"]) for r in read_csv(results, "anchors")}
        self.models = read_csv(results, "models")
        self.decode = read_csv(results, "decode_engine")
        self.torch = read_csv(results, "decode_torch")
        self.context = read_csv(results, "context_engine")
        self.prefill = read_csv(results, "prefill_engine")
        self.memory = read_csv(results, "memory")
        self.scheduler = read_csv(results, "decode_scheduler")
        self.e2e = read_csv(results, "decode_grpc")
        self.serving = read_csv(results, "serving_grpc")
        self.loads = read_csv(results, "loads")
        self.sections = []
        self.targets = []

    # --- anchors --------------------------------------------------------------------------------
    def copy_bandwidth(self):
        gbps = self.anchors.get("copy_bandwidth")
        return gbps * 1e9 if gbps else None

    def sgemm_peak(self):
        """The largest sgemm FLOP/s measured (the square shape): the large-batch ceiling."""
        values = [v for k, v in self.anchors.items() if k.startswith("sgemm_") and v]
        return max(values) * 1e9 if values else None

    def model_info(self, kind, long=False):
        for row in self.models:
            if row["kind"] == kind and (row["model"].endswith("-long") == long):
                return row
        return None

    def weight_read_ms(self, kind, cached=False):
        """Weight bytes / bandwidth: the issue's bound uses the STREAM-like copy over DRAM-sized
        arrays; `cached` uses the read-only sum over arrays about the weights' size, which a
        large last-level cache holds (the bound that applies when the weights stay cached)."""
        info = self.model_info(kind)
        gbps = self.anchors.get("read_bandwidth_small") if cached else None
        bandwidth = gbps * 1e9 if gbps else (None if cached else self.copy_bandwidth())
        if not info or not bandwidth:
            return None
        return float(info["weight_bytes"]) / bandwidth * 1e3

    def add(self, title, text):
        self.sections.append(f"### {title}\n\n{text}\n")

    def target(self, name, measured, goal, ok, note=""):
        verdict = "not measured" if ok is None else ("met" if ok else "**missed**")
        self.targets.append((name, measured, goal, verdict, note))

    # --- sections -------------------------------------------------------------------------------
    def machine_section(self):
        m = self.machine
        rows = [("CPU", f"{m.get('cpu', '?')} ({m.get('cores', '?')} cores, "
                        f"{m.get('memory_gib', '?')} GiB)"),
                ("threads (OpenBLAS, PyTorch, bandwidth test)", m.get("threads", "?")),
                ("software", f"{m.get('compiler', '?')}; OpenBLAS {m.get('openblas', '?')}; "
                             f"torch {m.get('torch', '?')}; Linux {m.get('kernel', '?')}"),
                ("run", f"{m.get('date_utc', '?')}, commit {m.get('git_commit', '?')}, "
                        f"`{m.get('command', 'scripts/bench.sh')}`")]
        if self.loads:
            peak = max(max(num(r["load1_before"]) or 0, num(r["load1_after"]) or 0)
                       for r in self.loads)
            per_suite = ", ".join(f"{r['suite']} {r['load1_before']}→{r['load1_after']}"
                                  for r in self.loads)
            rows.append(("load average (1 min) around each suite", f"{per_suite} (max {peak:.2f})"))
        for key, label in (("copy_bandwidth", "memory bandwidth, STREAM-like copy (DRAM-sized)"),
                           ("read_bandwidth", "memory bandwidth, read-only sum (DRAM-sized)"),
                           ("copy_bandwidth_small", "bandwidth, copy of cache-sized arrays"),
                           ("read_bandwidth_small", "bandwidth, read of cache-sized arrays")):
            if self.anchors.get(key):
                rows.append((label, f"{self.anchors[key]:.2f} GB/s"))
        for key, value in self.anchors.items():
            if key.startswith("sgemm_") and value:
                rows.append((f"OpenBLAS sgemm {key[6:]} (MxNxK)", f"{value:.1f} GFLOP/s"))
        self.add("Machine and anchors (measured in this run)", table(("", ""), rows))

    def models_section(self):
        if not self.models:
            return
        rows = [(r["model"], r["kind"], fmt_bytes(float(r["weight_bytes"])),
                 fmt_bytes(float(r["state_bytes_per_request"])),
                 f"{float(r['matmul_flops_per_token']) / 1e6:.2f}",
                 f"{float(r['attention_flops_per_token_at_context']) / 1e6:.3f}")
                for r in self.models]
        bw = self.copy_bandwidth()
        note = ""
        if bw:
            note = ("\n\nTime to read the weights once at the measured copy bandwidth: " +
                    ", ".join(f"{k} {fmt(self.weight_read_ms(k), 3)} ms" for k in KINDS
                              if self.weight_read_ms(k) is not None) + ".")
        self.add("Models (random weights, the bundled size)",
                 table(("model", "kind", "weights", "state / request", "matmul MFLOP / token",
                        f"attention MFLOP / token at {self.models[0]['context']}"), rows) + note)

    def decode_section(self):
        if not self.decode:
            return
        batches = sorted({int(r["batch"]) for r in self.decode})
        headers = ["batch"]
        for kind in KINDS:
            headers.append(f"{kind} tok/s")
        headers += ["abc GFLOP/s", "abc % sgemm", "abc step ms", "abc / weight-read"]
        torch_kinds = [k for k in KINDS if any(r["kind"] == k for r in self.torch)]
        headers += [f"{k} × torch" for k in torch_kinds]
        rows = []
        peak, read_ms = self.sgemm_peak(), self.weight_read_ms("abc")
        for batch in batches:
            row = [batch]
            for kind in KINDS:
                r = lookup(self.decode, kind=kind, batch=batch)
                row.append(fmt(num(r["tokens_per_s"])) if r else "–")
            abc = lookup(self.decode, kind="abc", batch=batch)
            gflops = num(abc["model_gflop_per_s"]) if abc else None
            row.append(fmt(gflops, 2))
            row.append(fmt(gflops * 1e9 / peak * 100) + "%" if gflops and peak else "–")
            row.append(fmt(num(abc["step_ms"]), 3) if abc else "–")
            row.append(fmt(num(abc["step_ms"]) / read_ms, 2) + "×" if abc and read_ms else "–")
            for kind in torch_kinds:
                ours, ref = lookup(self.decode, kind=kind, batch=batch), \
                    lookup(self.torch, kind=kind, batch=batch)
                row.append(fmt(num(ours["tokens_per_s"]) / num(ref["tokens_per_s"]), 2) + "×"
                           if ours and ref else "–")
            rows.append(row)
        context = self.decode[0]["context"]
        text = table(headers, rows)
        if self.torch:
            torch_rows = [(r["kind"], r["batch"], fmt(num(r["step_ms"]), 3),
                           fmt(num(r["tokens_per_s"]))) for r in self.torch]
            text += ("\n\nPyTorch reference (recurrent `step`, fp32, same models, same threads):\n\n"
                     + table(("kind", "batch", "step ms", "tok/s"), torch_rows))
        self.add(f"Decode throughput against batch size (engine only: LanguageModel::Step, "
                 f"context {context})", text)

        for kind in KINDS:
            one, sixty_four = lookup(self.decode, kind=kind, batch=1), \
                lookup(self.decode, kind=kind, batch=64)
            read_ms = self.weight_read_ms(kind)
            if kind == "abc" or kind in BOUNDED:
                if one and read_ms:
                    ratio = num(one["step_ms"]) / read_ms
                    self.target(f"{kind}: batch-1 step vs weight read (DRAM copy bandwidth)",
                                f"{ratio:.2f}× ({fmt(num(one['step_ms']), 3)} ms vs "
                                f"{fmt(read_ms, 3)} ms)", "≤ 2×", ratio <= 2)
                cached_ms = self.weight_read_ms(kind, cached=True)
                if one and cached_ms:
                    ratio = num(one["step_ms"]) / cached_ms
                    self.target(f"{kind}: batch-1 step vs weight read (cache-resident read)",
                                f"{ratio:.2f}× ({fmt(num(one['step_ms']), 3)} ms vs "
                                f"{fmt(cached_ms, 3)} ms)", "≤ 2× (stricter)", ratio <= 2)
                if sixty_four and peak:
                    share = num(sixty_four["model_gflop_per_s"]) * 1e9 / peak
                    self.target(f"{kind}: batch-64 FLOP/s vs sgemm", f"{share * 100:.1f}% "
                                f"({fmt(num(sixty_four['model_gflop_per_s']), 1)} of "
                                f"{fmt(peak / 1e9, 1)} GFLOP/s)", "≥ 40%", share >= 0.4)
                for batch, goal in ((1, 3), (64, 5)):
                    ours = lookup(self.decode, kind=kind, batch=batch)
                    ref = lookup(self.torch, kind=kind, batch=batch)
                    if ours and ref:
                        ratio = num(ours["tokens_per_s"]) / num(ref["tokens_per_s"])
                        self.target(f"{kind}: batch-{batch} tok/s vs PyTorch",
                                    f"{ratio:.2f}× ({fmt(num(ours['tokens_per_s']))} vs "
                                    f"{fmt(num(ref['tokens_per_s']))})", f"≥ {goal}×",
                                    ratio >= goal)
        if not self.torch:
            self.target("batch-1 / batch-64 tok/s vs PyTorch", "–", "≥ 3× / ≥ 5×", None)

    def context_section(self):
        if not self.context:
            return
        contexts = sorted({int(r["context"]) for r in self.context})
        kinds = [k for k in KINDS if any(r["kind"] == k for r in self.context)]
        rows = []
        for context in contexts:
            row = [context]
            for kind in kinds:
                r = lookup(self.context, kind=kind, context=context)
                row.append(fmt(num(r["step_ms"]), 3) if r else "–")
            rows.append(row)
        first, last = contexts[0], contexts[-1]
        ratio_row = [f"**{last} / {first}**"]
        for kind in kinds:
            a, b = lookup(self.context, kind=kind, context=first), \
                lookup(self.context, kind=kind, context=last)
            if a and b:
                ratio = num(b["step_ms"]) / num(a["step_ms"])
                ratio_row.append(f"{ratio:.2f}×")
                if kind in BOUNDED:
                    self.target(f"{kind}: latency at {last} vs {first}", f"{ratio:.3f}×", "≤ 1.10×",
                                ratio <= 1.10)
            else:
                ratio_row.append("–")
        rows.append(ratio_row)
        batch = self.context[0]["batch"]
        self.add(f"Per-token latency (ms) against context length (engine only, batch {batch})",
                 table(["context"] + [f"{k} ms" for k in kinds], rows))

    def memory_section(self):
        if not self.memory:
            return
        contexts = sorted({int(r["context"]) for r in self.memory})
        budgets = sorted({r["budget_gib"] for r in self.memory}, key=float)
        kinds = [k for k in KINDS if any(r["kind"] == k for r in self.memory)]
        headers = ["context"] + [f"{k} / request" for k in kinds] + \
            [f"{k} requests in {b} GiB" for b in budgets for k in kinds]
        rows = []
        for context in contexts:
            row = [context]
            for kind in kinds:
                r = lookup(self.memory, kind=kind, context=context)
                row.append(fmt_bytes(float(r["state_bytes_per_request"])) if r else "–")
            for budget in budgets:
                for kind in kinds:
                    r = lookup(self.memory, kind=kind, context=context, budget_gib=budget)
                    row.append(f"{int(r['max_requests']):,}" if r else "–")
            rows.append(row)
        self.add("Memory per request and concurrent requests per memory budget "
                 "(ABC/RFA/Luna: fixed state; softmax: KV cache at that context)",
                 table(headers, rows))

    def prefill_section(self):
        if not self.prefill:
            return
        lengths = sorted({int(r["prompt_tokens"]) for r in self.prefill})
        kinds = [k for k in KINDS if any(r["kind"] == k for r in self.prefill)]
        rows = []
        for length in lengths:
            row = [length]
            for kind in kinds:
                r = lookup(self.prefill, kind=kind, prompt_tokens=length)
                row.append(f"{fmt(num(r['ttft_ms']), 2)} / {fmt(num(r['prefill_tokens_per_s']))}"
                           if r else "–")
            rows.append(row)
        self.add("Prefill: time to first token (ms) / prefill tokens/s against prompt length "
                 "(engine only, one request)",
                 table(["prompt tokens"] + kinds, rows))

    def serving_section(self):
        if self.scheduler or self.e2e:
            rows = []
            for source, data in (("in-process scheduler", self.scheduler), ("gRPC", self.e2e)):
                for r in data:
                    requests = r.get("concurrency") or r.get("requests")
                    engine = lookup(self.decode, kind=r["kind"], batch=requests)
                    engine_tps = num(engine["tokens_per_s"]) if engine else None
                    steady = num(r["steady_tokens_per_s"])
                    rows.append((source, r["kind"], requests, fmt(steady),
                                 fmt(engine_tps),
                                 fmt(steady / engine_tps * 100) + "%" if engine_tps else "–",
                                 fmt(num(r["ttft_ms_p50"]), 2), fmt(num(r["ttft_ms_p99"]), 2),
                                 fmt(num(r["itl_ms_p50"]), 2), fmt(num(r["itl_ms_p99"]), 2)))
            self.add("Serving at fixed concurrency (all requests at once, greedy, ignore_eos): "
                     "steady decode tok/s against engine-only Step at the same batch",
                     table(("path", "kind", "requests", "steady tok/s", "engine Step tok/s",
                            "share", "TTFT p50 ms", "TTFT p99 ms", "ITL p50 ms", "ITL p99 ms"),
                           rows))
        grpc32 = lookup(self.e2e, kind="abc", requests=32)
        engine32 = lookup(self.decode, kind="abc", batch=32)
        if grpc32 and engine32:
            share = num(grpc32["steady_tokens_per_s"]) / num(engine32["tokens_per_s"])
            self.target("abc: gRPC e2e tok/s at 32 vs engine-only batch 32",
                        f"{share * 100:.1f}% ({fmt(num(grpc32['steady_tokens_per_s']))} vs "
                        f"{fmt(num(engine32['tokens_per_s']))})", "≥ 90%", share >= 0.9)
        else:
            self.target("abc: gRPC e2e tok/s at 32 vs engine-only batch 32", "–", "≥ 90%", None)
        if self.serving:
            rows = [(r["kind"], r["request_rate"], r["requests"], r["failed"],
                     fmt(num(r["overall_tokens_per_s"])),
                     fmt(num(r["ttft_ms_p50"]), 1), fmt(num(r["ttft_ms_p90"]), 1),
                     fmt(num(r["ttft_ms_p99"]), 1), fmt(num(r["itl_ms_p50"]), 2),
                     fmt(num(r["itl_ms_p90"]), 2), fmt(num(r["itl_ms_p99"]), 2))
                    for r in self.serving]
            self.add("End-to-end serving through gRPC streaming, Poisson arrivals",
                     table(("kind", "req/s", "requests", "failed", "tok/s", "TTFT p50 ms",
                            "TTFT p90 ms",
                            "TTFT p99 ms", "ITL p50 ms", "ITL p90 ms", "ITL p99 ms"), rows))

    def targets_section(self):
        rows = [(name, measured, goal, verdict) for name, measured, goal, verdict, _ in self.targets]
        self.sections.insert(0, "### Targets (issue 6, CPU backend, bundled model size)\n\n" +
                             table(("target", "measured", "goal", "verdict"), rows) + "\n")

    def build(self):
        self.machine_section()
        self.models_section()
        self.decode_section()
        self.context_section()
        self.memory_section()
        self.prefill_section()
        self.serving_section()
        self.targets_section()
        return "\n".join(self.sections)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--no-plots", action="store_true")
    args = parser.parse_args(argv)
    report = Report(args.results)
    text = report.build()
    (args.results / "summary.md").write_text(text)
    print(text)
    if not args.no_plots:
        written = plots.draw_all(report, args.results)
        print("plots: " + ", ".join(str(p.name) for p in written), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
