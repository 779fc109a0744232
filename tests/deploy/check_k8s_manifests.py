#!/usr/bin/python3
"""Checks deploy/k8s: every object against the Kubernetes schema (k8s_schema.py), then the
promises the manifests make to each other and to the server:

  - selectors of the Services, PodDisruptionBudget and Deployment match the pod labels, named
    target ports exist, the ServiceMonitor selects exactly one Service and names its port;
  - the HorizontalPodAutoscaler targets the Deployment and scales on the per-pod metric that
    prometheus-adapter-rules.yaml exposes;
  - the server container asks for a GPU, probes gRPC health on the port --listen uses, and
    its grace period outlasts preStop + --drain-timeout (so a drain is never SIGKILLed), while
    liveness tolerates NOT_SERVING for the whole drain;
  - the pod runs as the non-root user the Dockerfile creates;
  - kustomization.yaml lists every manifest file;
  - the session store (objects labelled app.kubernetes.io/component: session-store): its
    Service selects its pods on a container port, and the server's --session-store names
    that Service and port.

Usage: check_k8s_manifests.py REPO_ROOT. Prints every problem found; exit 1 if any.
"""

import pathlib
import re
import sys

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import k8s_schema  # noqa: E402

# After the drain, the server gives gRPC this long to close its calls before it exits
# (server_lifecycle.cc: Shutdown(now + 5 s)); the grace period must cover it too.
GRPC_SHUTDOWN_SECONDS = 5
# Files in deploy/k8s that are configuration for other tools, not Kubernetes objects.
NOT_OBJECTS = {"prometheus-adapter-rules.yaml"}


class Report:
    def __init__(self):
        self.problems = []

    def require(self, condition, message):
        if not condition:
            self.problems.append(message)
        return condition


def load_objects(k8s_dir, report):
    objects = []
    for path in sorted(k8s_dir.glob("*.yaml")):
        if path.name in NOT_OBJECTS:
            continue
        for index, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if doc is None:
                continue
            where = f"{path.name}#{index}({doc.get('kind')}/{doc.get('metadata', {}).get('name')})"
            report.problems.extend(k8s_schema.check_object(doc, where))
            objects.append((path.name, doc))
    return objects


def only(objects, kind, report):
    found = [doc for _, doc in objects if doc.get("kind") == kind]
    report.require(len(found) == 1, f"expected exactly one {kind}, found {len(found)}")
    return found[0] if found else None


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def parse_flags(args):
    flags = {}
    for arg in args:
        match = re.fullmatch(r"--([a-z][a-z0-9-]*)=(.*)", arg)
        if match:
            flags[match.group(1)] = match.group(2)
    return flags


def duration_seconds(text):
    """Seconds in an absl duration flag value such as 45s, 1m30s, 500ms (the server's format)."""
    units = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"--drain-timeout={text!r} is not a duration such as 45s or 1m")
    return sum(float(n) * units[u] for n, u in parts)


def port_of(address):
    return int(address.rsplit(":", 1)[1])


def check_deployment(deployment, dockerfile_text, report):
    spec = deployment["spec"]
    pod = spec["template"]
    pod_labels = pod["metadata"].get("labels", {})
    report.require(selects(spec["selector"].get("matchLabels"), pod_labels),
                   "Deployment: selector.matchLabels does not match the pod template labels")
    pod_spec = pod["spec"]
    containers = [c for c in pod_spec["containers"] if c["name"] == "slotserve"]
    if not report.require(len(containers) == 1, "Deployment: no container named slotserve"):
        return pod_labels, {}
    container = containers[0]
    ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    flags = parse_flags(container.get("args", []))
    for flag in ("model", "listen", "metrics-listen", "drain-timeout"):
        report.require(flag in flags, f"Deployment: container args lack --{flag}=...")
    if "listen" in flags:
        report.require(port_of(flags["listen"]) == ports.get("grpc"),
                       f"Deployment: --listen {flags['listen']} is not the grpc containerPort "
                       f"{ports.get('grpc')}")
    if "metrics-listen" in flags:
        metrics_port = port_of(flags["metrics-listen"])
        report.require(metrics_port == ports.get("metrics"),
                       f"Deployment: --metrics-listen {flags['metrics-listen']} is not the "
                       f"metrics containerPort {ports.get('metrics')}")
        annotations = pod["metadata"].get("annotations", {})
        if "prometheus.io/port" in annotations:
            report.require(annotations["prometheus.io/port"] == str(metrics_port),
                           "Deployment: prometheus.io/port annotation is not the metrics port")

    limits = container.get("resources", {}).get("limits", {})
    report.require(int(limits.get("nvidia.com/gpu", 0)) >= 1,
                   "Deployment: container does not request a GPU (limits nvidia.com/gpu)")

    for probe_name in ("readinessProbe", "livenessProbe"):
        probe = container.get(probe_name)
        if report.require(probe is not None, f"Deployment: {probe_name} missing"):
            report.require("grpc" in probe and probe["grpc"].get("port") == ports.get("grpc"),
                           f"Deployment: {probe_name} is not a gRPC health probe on the grpc "
                           f"port {ports.get('grpc')}")
    for probe_name in ("startupProbe", "readinessProbe", "livenessProbe"):
        probe = container.get(probe_name) or {}
        handlers = [h for h in ("exec", "httpGet", "tcpSocket", "grpc") if h in probe]
        if probe:
            report.require(len(handlers) == 1,
                           f"Deployment: {probe_name} needs exactly one handler, has {handlers}")

    try:
        drain = duration_seconds(flags.get("drain-timeout", "0s"))
    except ValueError as error:
        report.require(False, f"Deployment: {error}")
        drain = 0
    pre_stop = container.get("lifecycle", {}).get("preStop", {})
    pre_stop_seconds = 0
    command = pre_stop.get("exec", {}).get("command", [])
    if len(command) == 2 and command[0] == "sleep":
        pre_stop_seconds = int(command[1])
    grace = pod_spec.get("terminationGracePeriodSeconds", 30)
    report.require(grace >= pre_stop_seconds + drain + GRPC_SHUTDOWN_SECONDS,
                   f"Deployment: terminationGracePeriodSeconds {grace} must exceed preStop "
                   f"{pre_stop_seconds} s + --drain-timeout {drain} s + gRPC shutdown "
                   f"{GRPC_SHUTDOWN_SECONDS} s")
    liveness = container.get("livenessProbe", {})
    tolerated = liveness.get("periodSeconds", 10) * liveness.get("failureThreshold", 3)
    report.require(tolerated >= drain,
                   f"Deployment: liveness tolerates NOT_SERVING for only {tolerated} s, less "
                   f"than --drain-timeout {drain} s: a draining pod would be restarted")

    security = pod_spec.get("securityContext", {})
    report.require(security.get("runAsNonRoot") is True,
                   "Deployment: pod securityContext.runAsNonRoot must be true")
    user = re.search(r"^USER\s+(\d+)", dockerfile_text, re.MULTILINE)
    if report.require(user is not None, "Dockerfile: no numeric USER line"):
        report.require(security.get("runAsUser") == int(user.group(1)),
                       f"Deployment: runAsUser {security.get('runAsUser')} is not the "
                       f"Dockerfile's USER {user.group(1)}")
    return pod_labels, ports


def check_services(services, pod_labels, ports, report):
    for service in services:
        name = service["metadata"]["name"]
        report.require(selects(service["spec"].get("selector"), pod_labels),
                       f"Service {name}: selector does not match the slotserve pods")
        for port in service["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            if isinstance(target, str):
                report.require(target in ports,
                               f"Service {name}: targetPort {target!r} is not a container port")
            if port.get("name") == "grpc":
                report.require(port.get("appProtocol") == "grpc",
                               f"Service {name}: grpc port needs appProtocol: grpc so L7 "
                               "proxies balance per request")
    headless = [s for s in services if s["spec"].get("clusterIP") == "None"]
    report.require(len(headless) >= 1,
                   "no headless Service for client-side (round_robin) load balancing")


def check_service_monitor(monitor, services, report):
    selector = monitor["spec"]["selector"].get("matchLabels")
    chosen = [s for s in services if selects(selector, s["metadata"].get("labels", {}))]
    if report.require(len(chosen) == 1,
                      f"ServiceMonitor selects {len(chosen)} Services; exactly one keeps each "
                      "pod scraped once"):
        names = {p.get("name") for p in chosen[0]["spec"]["ports"]}
        for endpoint in monitor["spec"]["endpoints"]:
            report.require(endpoint.get("port") in names,
                           f"ServiceMonitor: port {endpoint.get('port')!r} is not a port of "
                           f"Service {chosen[0]['metadata']['name']}")


def check_autoscaler(hpa, deployment, adapter_rules, report):
    target = hpa["spec"]["scaleTargetRef"]
    report.require(target["kind"] == "Deployment"
                   and target["name"] == deployment["metadata"]["name"],
                   "HorizontalPodAutoscaler: scaleTargetRef is not the slotserve Deployment")
    exposed = {rule["name"]["as"] for rule in adapter_rules["rules"]["custom"]}
    for metric in hpa["spec"]["metrics"]:
        if metric["type"] == "Pods":
            name = metric["pods"]["metric"]["name"]
            report.require(name in exposed,
                           f"HorizontalPodAutoscaler: metric {name} is not exposed by "
                           f"prometheus-adapter-rules.yaml (exposes {sorted(exposed)})")
    report.require(any(m["type"] == "Pods"
                       and m["pods"]["metric"]["name"] == "slotserve_requests_queued"
                       for m in hpa["spec"]["metrics"]),
                   "HorizontalPodAutoscaler: does not scale on slotserve_requests_queued")


def check_session_store(objects, server_deployment, report):
    """The Redis Deployment and Service, and the server's --session-store pointing at them."""
    deployments = [d for d in objects if d.get("kind") == "Deployment"]
    services = [d for d in objects if d.get("kind") == "Service"]
    flags = {}
    if server_deployment:
        for container in server_deployment["spec"]["template"]["spec"]["containers"]:
            flags.update(parse_flags(container.get("args", [])))
    store = flags.get("session-store", "memory")
    if store == "memory" and not deployments:
        return
    if not report.require(len(deployments) == 1 and len(services) == 1,
                          "session store: expected one Deployment and one Service, found "
                          f"{len(deployments)} and {len(services)}"):
        return
    pod = deployments[0]["spec"]["template"]
    pod_labels = pod["metadata"].get("labels", {})
    ports = {p["name"]: p["containerPort"]
             for c in pod["spec"]["containers"] for p in c.get("ports", [])}
    service = services[0]
    name = service["metadata"]["name"]
    report.require(selects(service["spec"].get("selector"), pod_labels),
                   f"Service {name}: selector does not match the session store's pods")
    for port in service["spec"]["ports"]:
        target = port.get("targetPort", port["port"])
        report.require(target in ports if isinstance(target, str) else target in ports.values(),
                       f"Service {name}: targetPort {target!r} is not a container port")
    served = {f"redis://{name}:{p['port']}" for p in service["spec"]["ports"]}
    report.require(store in served,
                   f"Deployment: --session-store={store} is not the session store's Service "
                   f"({', '.join(sorted(served))})")


def check_kustomization(kustomization, k8s_dir, report):
    listed = set(kustomization["resources"])
    on_disk = {p.name for p in k8s_dir.glob("*.yaml")} - NOT_OBJECTS - {"kustomization.yaml"}
    report.require(listed == on_disk,
                   f"kustomization.yaml resources {sorted(listed)} differ from the manifests "
                   f"on disk {sorted(on_disk)}")


def check(root):
    """Returns (number of objects, list of problems) for the manifests under root/deploy/k8s."""
    k8s_dir = root / "deploy" / "k8s"
    report = Report()
    objects = load_objects(k8s_dir, report)
    if report.problems:
        return len(objects), report.problems  # the cross-checks assume well-formed objects
    store_objects = [doc for _, doc in objects if doc.get("metadata", {}).get("labels", {}).get(
        "app.kubernetes.io/component") == "session-store"]
    objects = [(f, doc) for f, doc in objects if not any(doc is o for o in store_objects)]
    deployment = only(objects, "Deployment", report)
    check_session_store(store_objects, deployment, report)
    services = [doc for _, doc in objects if doc.get("kind") == "Service"]
    monitor = only(objects, "ServiceMonitor", report)
    hpa = only(objects, "HorizontalPodAutoscaler", report)
    pdb = only(objects, "PodDisruptionBudget", report)
    kustomization = only(objects, "Kustomization", report)
    adapter_rules = yaml.safe_load((k8s_dir / "prometheus-adapter-rules.yaml").read_text())

    if deployment:
        pod_labels, ports = check_deployment(
            deployment, (root / "Dockerfile").read_text(), report)
        check_services(services, pod_labels, ports, report)
        if pdb:
            report.require(selects(pdb["spec"]["selector"].get("matchLabels"), pod_labels),
                           "PodDisruptionBudget: selector does not match the slotserve pods")
        if hpa:
            check_autoscaler(hpa, deployment, adapter_rules, report)
    if monitor:
        check_service_monitor(monitor, services, report)
    if kustomization:
        check_kustomization(kustomization, k8s_dir, report)
    return len(objects), report.problems


def main():
    root = pathlib.Path(sys.argv[1])
    count, problems = check(root)
    for problem in problems:
        print(f"FAIL {problem}")
    print(f"checked {count} objects in {root / 'deploy' / 'k8s'}: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
