"""PNG plots of the benchmark results, drawn with gnuplot (Debian's gnuplot-nox): one data file
per series under results/plotdata/, one gnuplot script per plot next to it (kept, so a plot can
be restyled by hand), and the PNG in results/."""

import subprocess
from pathlib import Path

COLORS = {"abc": "#1b9e77", "rfa": "#d95f02", "luna": "#7570b3", "softmax": "#e7298a"}
KINDS = tuple(COLORS)


def _series(rows, kind, x, y, scale=1.0, **where):
    points = []
    for row in rows:
        if row.get("kind") != kind or any(str(row.get(k)) != str(v) for k, v in where.items()):
            continue
        try:
            points.append((float(row[x]), float(row[y]) * scale))
        except (KeyError, TypeError, ValueError):
            continue
    return sorted(points)


def _plot(results, name, title, xlabel, ylabel, series, logx=True, logy=False):
    """series: (label, points, color, dash) tuples. Returns the PNG path, or None if empty."""
    series = [s for s in series if s[1]]
    if not series:
        return None
    data_dir = results / "plotdata"
    data_dir.mkdir(exist_ok=True)
    clauses = []
    for i, (label, points, color, dash) in enumerate(series):
        data = data_dir / f"{name}_{i}.dat"
        data.write_text("".join(f"{px:g} {py:g}\n" for px, py in points))
        clauses.append(f"'plotdata/{data.name}' using 1:2 with linespoints lw 2 pt 7 ps 0.8 "
                       f"dt {dash} lc rgb '{color}' title '{label}'")
    png = results / f"{name}.png"
    script = [
        "set terminal pngcairo size 900,560 font 'sans,11'",
        f"set output '{png.name}'",
        f"set title '{title}'",
        f"set xlabel '{xlabel}'",
        f"set ylabel '{ylabel}'",
        "set grid",
        "set key outside right top",
    ]
    if logx:
        script.append("set logscale x 2")
    if logy:
        script.append("set logscale y 10")
    script.append("plot " + ", \\\n     ".join(clauses))
    gp = data_dir / f"{name}.gp"
    gp.write_text("\n".join(script) + "\n")
    # Paths in the script are relative to the results folder, so it can be re-run anywhere.
    subprocess.run(["gnuplot", f"plotdata/{gp.name}"], check=True, cwd=results)
    return png


def draw_all(report, results):
    pngs = []
    series = []
    for kind in KINDS:
        series.append((f"{kind} engine", _series(report.decode, kind, "batch", "tokens_per_s"),
                       COLORS[kind], 1))
        series.append((f"{kind} PyTorch", _series(report.torch, kind, "batch", "tokens_per_s"),
                       COLORS[kind], 2))
        series.append((f"{kind} gRPC", _series(report.e2e, kind, "requests",
                                               "steady_tokens_per_s"), COLORS[kind], 3))
    pngs.append(_plot(results, "decode_throughput", "Decode throughput against batch size",
                      "batch size (concurrent requests)", "tokens/s", series, logy=True))

    series = [(kind, _series(report.context, kind, "context", "step_ms"), COLORS[kind], 1)
              for kind in KINDS]
    pngs.append(_plot(results, "context_latency", "Per-token decode latency against context",
                      "context length (tokens)", "ms per token (batch 1)", series))

    budget = min((r["budget_gib"] for r in report.memory), key=float, default=None)
    series = [(kind, _series(report.memory, kind, "context", "state_bytes_per_request",
                             scale=1 / 2**20, budget_gib=budget), COLORS[kind], 1)
              for kind in KINDS]
    pngs.append(_plot(results, "memory_per_request", "Memory per request against context",
                      "context length (tokens)", "MiB per request", series, logy=True))

    series = [(kind, _series(report.prefill, kind, "prompt_tokens", "ttft_ms"), COLORS[kind], 1)
              for kind in KINDS]
    pngs.append(_plot(results, "prefill_ttft", "Time to first token against prompt length "
                      "(engine only)", "prompt tokens", "ms", series, logy=True))

    series = [(kind, _series(report.serving, kind, "request_rate", "ttft_ms_p50"), COLORS[kind], 1)
              for kind in KINDS]
    series += [(f"{kind} p99", _series(report.serving, kind, "request_rate", "ttft_ms_p99"),
                COLORS[kind], 2) for kind in KINDS]
    pngs.append(_plot(results, "serving_ttft", "gRPC serving, Poisson arrivals: time to first "
                      "token", "request rate (req/s)", "ms", series, logx=False, logy=True))
    return [p for p in pngs if p]
