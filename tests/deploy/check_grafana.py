#!/usr/bin/python3
"""Checks the Grafana provisioning of deploy/compose.yaml without a Grafana:

  - every dashboard JSON parses, panel ids are unique and panels do not overlap;
  - every panel and target names the provisioned Prometheus datasource by its uid;
  - the dashboard provider reads the folder compose mounts the dashboards into;
  - the dashboard shows what the issue asks for: requests running and queued, slots used,
    tokens/s, TTFT and inter-token latency percentiles (histogram_quantile), step duration
    by phase.

Usage: check_grafana.py REPO_ROOT. Prints every problem; exit 1 if any.
"""

import json
import pathlib
import re
import sys

import yaml

REQUIRED_QUERIES = {
    "requests running": r"\bslotserve_requests_running\b",
    "requests queued": r"\bslotserve_requests_queued\b",
    "slots used": r"\bslotserve_state_slots_used\b",
    "tokens/s": r"rate\(slotserve_generated_tokens_total\b",
    "TTFT percentiles": r"histogram_quantile\(.*slotserve_time_to_first_token_seconds_bucket",
    "inter-token latency percentiles":
        r"histogram_quantile\(.*slotserve_inter_token_latency_seconds_bucket",
    "step duration by phase": r"by \([^)]*\bphase\b[^)]*\).*slotserve_step_duration_seconds",
}


def all_panels(panels):
    for panel in panels:
        yield panel
        yield from all_panels(panel.get("panels", []))


def overlaps(a, b):
    return (a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"]
            and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"])


def main():
    root = pathlib.Path(sys.argv[1])
    grafana = root / "deploy" / "grafana"
    problems = []
    datasources = yaml.safe_load(
        (grafana / "provisioning" / "datasources" / "prometheus.yaml").read_text())
    uids = {d["uid"] for d in datasources["datasources"] if d["type"] == "prometheus"}
    provider = yaml.safe_load(
        (grafana / "provisioning" / "dashboards" / "slotserve.yaml").read_text())
    compose = yaml.safe_load((root / "deploy" / "compose.yaml").read_text())
    mounts = {v.split(":")[1]: v.split(":")[0] for v in compose["services"]["grafana"]["volumes"]}
    for p in provider["providers"]:
        source = mounts.get(p["options"]["path"])
        if source != "./grafana/dashboards":
            problems.append(f"dashboard provider path {p['options']['path']} is not where "
                            f"compose mounts ./grafana/dashboards (mounts: {mounts})")

    dashboards = sorted((grafana / "dashboards").glob("*.json"))
    if not dashboards:
        problems.append(f"no dashboard JSON in {grafana / 'dashboards'}")
    for path in dashboards:
        dashboard = json.loads(path.read_text())
        panels = list(all_panels(dashboard.get("panels", [])))
        ids = [p["id"] for p in panels]
        if len(ids) != len(set(ids)):
            problems.append(f"{path.name}: panel ids repeat: {ids}")
        for i, a in enumerate(panels):
            for b in panels[i + 1:]:
                if overlaps(a["gridPos"], b["gridPos"]):
                    problems.append(f"{path.name}: panels {a['title']!r} and {b['title']!r} "
                                    "overlap")
        exprs = []
        for panel in panels:
            for item in [panel] + panel.get("targets", []):
                uid = item.get("datasource", {}).get("uid")
                if uid not in uids:
                    problems.append(f"{path.name}: {panel['title']!r} uses datasource uid "
                                    f"{uid!r}, provisioned: {sorted(uids)}")
            exprs += [t["expr"] for t in panel.get("targets", [])]
        for what, pattern in REQUIRED_QUERIES.items():
            if not any(re.search(pattern, e) for e in exprs):
                problems.append(f"{path.name}: no panel shows {what} (/{pattern}/)")
        print(f"{path.name}: {len(panels)} panels, {len(exprs)} queries")
    for problem in problems:
        print(f"FAIL {problem}")
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
