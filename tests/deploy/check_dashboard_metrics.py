#!/usr/bin/python3
"""Starts a real slotserve-server on loopback and checks that everything the deployment
queries exists in its /metrics scrape:

  - every metric family and label named in the Grafana dashboard's PromQL (panels and
    template variables), in the Prometheus alert rules, and in the autoscaler's metric;
  - the Dockerfile's HEALTHCHECK command (slotserve-cli ... health) succeeds against it;
  - on SIGTERM it drains and exits 0, as the Kubernetes grace period and compose's
    stop_grace_period assume.

Usage: check_dashboard_metrics.py REPO_ROOT SERVER_BIN CLI_BIN MODEL_DIR
"""

import json
import pathlib
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
# Labels Prometheus, Kubernetes or histogram_quantile add; the server does not export them.
TARGET_LABELS = {"le", "instance", "job", "namespace", "pod", "service"}
METRIC = re.compile(r"\b(slotserve_[a-zA-Z0-9_:]*)")
GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")
MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*\"")
STARTUP_SECONDS = 60


def dashboard_queries(dashboard):
    """Every PromQL string of a dashboard: panel targets (rows nest panels) and variables."""
    queries = []

    def visit_panels(panels):
        for panel in panels:
            queries.extend(t["expr"] for t in panel.get("targets", []) if t.get("expr"))
            visit_panels(panel.get("panels", []))

    visit_panels(dashboard.get("panels", []))
    for variable in dashboard.get("templating", {}).get("list", []):
        query = variable.get("query")
        if isinstance(query, dict):
            query = query.get("query")
        if isinstance(query, str) and query:
            queries.append(query)
    return queries


def deployment_queries(root):
    """(where, PromQL) pairs from the dashboard, the alert rules and the autoscaler."""
    found = []
    for path in sorted((root / "deploy" / "grafana" / "dashboards").glob("*.json")):
        dashboard = json.loads(path.read_text())
        found += [(path.name, q) for q in dashboard_queries(dashboard)]
    rules = yaml.safe_load((root / "deploy" / "slotserve-rules.yml").read_text())
    for group in rules["groups"]:
        found += [("slotserve-rules.yml", rule["expr"]) for rule in group["rules"]]
    hpa = yaml.safe_load((root / "deploy" / "k8s" / "hpa.yaml").read_text())
    for metric in hpa["spec"]["metrics"]:
        if metric["type"] == "Pods":
            found.append(("hpa.yaml", metric["pods"]["metric"]["name"]))
    return found


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_scrape(text):
    """Returns ({family: type}, {family: set of label names}) from Prometheus text format."""
    types, labels = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(None, 3)
            types[name] = kind
            labels.setdefault(name, set())
        elif line and not line.startswith("#"):
            match = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?", line)
            name = match.group(1)
            family = name
            for suffix in HISTOGRAM_SUFFIXES + ("_total",):
                if name.endswith(suffix) and name[: -len(suffix)] in types:
                    family = name[: -len(suffix)]
            names = set(re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)=\"", match.group(3) or ""))
            labels.setdefault(family, set()).update(names)
    return types, labels


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        return response.read().decode()


def start_server(server_bin, model_dir, grpc_port, metrics_port):
    command = [server_bin, f"--model={model_dir}", f"--listen=127.0.0.1:{grpc_port}",
               f"--metrics-listen=127.0.0.1:{metrics_port}", "--backend=cpu", "--threads=1",
               "--max-slots=4", "--drain-timeout=5s"]
    print("starting:", shlex.join(command), flush=True)
    log = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: the server never blocks on it
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, text=True)
    process.log = log
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"slotserve-server exited with {process.returncode} before "
                               f"serving metrics:\n{read_log(process)}")
        try:
            text = scrape(metrics_port)
            if "slotserve_" in text:  # the registry may be attached after the port opens
                return process, text
        except OSError:
            pass
        time.sleep(0.2)
    process.kill()
    process.wait()
    raise RuntimeError(f"no slotserve_ metrics on 127.0.0.1:{metrics_port} within "
                       f"{STARTUP_SECONDS} s:\n{read_log(process)}")


def read_log(process):
    process.log.seek(0)
    return process.log.read()


def healthcheck_command(root, cli_bin, grpc_port):
    """The Dockerfile's HEALTHCHECK argv, pointed at this server and this build's CLI."""
    text = (root / "Dockerfile").read_text().replace("\\\n", " ")
    match = re.search(r"^HEALTHCHECK\b.*?\bCMD\s+(\[.*\])", text, re.MULTILINE)
    argv = json.loads(match.group(1))
    argv[0] = cli_bin
    return [f"127.0.0.1:{grpc_port}" if a.startswith("127.0.0.1:") else a for a in argv]


def compare(queries, types, labels):
    """Problems with the metric families and labels that (where, PromQL) pairs name."""
    problems = []
    exported = {f for f in types if f.startswith("slotserve_")}
    exported_labels = set().union(*(labels[f] for f in exported)) if exported else set()
    for where, query in queries:
        for name in METRIC.findall(query):
            family = name
            for suffix in HISTOGRAM_SUFFIXES:
                base = name[: -len(suffix)]
                if name.endswith(suffix) and types.get(base) in ("histogram", "summary"):
                    family = base
            if family not in exported:
                problems.append(f"{where}: {name} is not exported by the server (query: {query})")
            elif name.endswith("_bucket") and types.get(family) != "histogram":
                problems.append(f"{where}: {name} used as histogram buckets, but {family} is a "
                                f"{types.get(family)}")
        used_labels = set(MATCHER.findall(query))
        for group in GROUPING.findall(query):
            used_labels.update(label.strip() for label in group.split(",") if label.strip())
        for label in sorted(used_labels - TARGET_LABELS):
            if label not in exported_labels:
                problems.append(f"{where}: label {label!r} appears on no exported slotserve "
                                f"series (query: {query})")
    return problems


def main():
    root, server_bin, cli_bin, model_dir = (pathlib.Path(a) for a in sys.argv[1:5])
    problems = []
    queries = deployment_queries(root)
    grpc_port, metrics_port = free_port(), free_port()
    process, text = start_server(str(server_bin), model_dir, grpc_port, metrics_port)
    try:
        types, labels = parse_scrape(text)
        exported = {f for f in types if f.startswith("slotserve_")}
        print(f"scrape: {len(exported)} slotserve families: {', '.join(sorted(exported))}")
        if not exported:
            problems.append(f"the scrape has no slotserve_ families:\n{text[:2000]}")

        problems += compare(queries, types, labels)
        print(f"checked {len(queries)} queries")
        # A negative control, so a comparison that silently matches nothing cannot pass.
        control = compare([("control", "rate(slotserve_no_such_metric_total[1m])"),
                           ("control", "sum by (no_such_label) (slotserve_requests_running)")],
                          types, labels)
        if not (any("no_such_metric" in p for p in control)
                and any("'no_such_label'" in p for p in control)):
            problems.append(f"the comparison missed a made-up metric or label: {control}")

        health = healthcheck_command(root, str(cli_bin), grpc_port)
        for _ in range(20):  # the gRPC port may open a moment after the metrics port
            result = subprocess.run(health, capture_output=True, text=True, timeout=30,
                                    check=False)
            if result.returncode == 0:
                break
            time.sleep(0.5)
        print(f"healthcheck {shlex.join(health)}: exit {result.returncode} "
              f"{result.stdout.strip()} {result.stderr.strip()}")
        if result.returncode != 0:
            problems.append(f"Dockerfile HEALTHCHECK command fails against a serving server: "
                            f"exit {result.returncode}: {result.stdout}{result.stderr}")
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            code = "killed after 30 s"
        output = read_log(process)
    if code != 0:
        problems.append(f"slotserve-server did not exit 0 on SIGTERM (got {code}):\n{output}")
    for problem in problems:
        print(f"FAIL {problem}")
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
