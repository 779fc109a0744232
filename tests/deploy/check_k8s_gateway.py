#!/usr/bin/python3
"""Checks the inference-gateway overlays (deploy/k8s-overlays) and the KServe serving runtime
(deploy/k8s/kserve): every object against its schema (k8s_schema.py, with the custom resources'
published API versions in gateway_schemas.py), then `kubectl kustomize` of each overlay and the
promises the built objects make to each other and to the server:

  - the InferencePool selects the server pods, on the port --http-listen serves (where the
    endpoint picker also scrapes /metrics), and names its endpoint picker with a port;
  - every HTTPRoute backendRef names an object the overlay has (the pool, or a Service port);
  - gateway: sessions in Redis (--session-store=redis://, the Redis objects present);
  - gateway-memory-sessions: --session-store=memory, no Redis and no autoscaler, the sessions
    route matches the header the BackendTrafficPolicy hashes, and the policy targets that route;
  - each overlay's kustomization lists every file in its directory;
  - the ServingRuntime's container serves HTTP on its declared port, probes /health there.

Usage: check_k8s_gateway.py REPO_ROOT. Prints every problem found; exit 1 if any.
"""

import pathlib
import re
import shutil
import subprocess
import sys

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gateway_schemas  # noqa: E402
import k8s_schema  # noqa: E402

OVERLAYS = ("gateway", "gateway-memory-sessions")
SESSION_HEADER = "x-slotserve-session"


def schema_problems(doc, where):
    if isinstance(doc, list) or doc.get("$patch") == "delete":
        return []  # a deletion or a JSON patch, checked through the build below
    return k8s_schema.check_object(doc, where) + gateway_schemas.check_values(doc, where)


def load_files(directory, problems):
    count = 0
    for path in sorted(directory.glob("*.yaml")):
        for index, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if doc is None:
                continue
            count += 1
            kind = doc.get("kind") if isinstance(doc, dict) else "patch"
            problems.extend(schema_problems(doc, f"{path.relative_to(directory.parent.parent)}"
                                                 f"#{index}({kind})"))
    return count


def kustomize_command():
    """kustomize build, or the kustomize built into kubectl; None when neither is installed.
    (Debian's kubernetes-client 1.20 embeds kustomize 2, older than the `labels` and
    `patches` fields these files use: install kustomize or a current kubectl.)"""
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    return None


def kustomize(directory, problems):
    command = kustomize_command() + [str(directory)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    if result.returncode != 0:
        problems.append(f"{' '.join(command)} failed: {result.stderr.strip()}")
        return []
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def of_kind(objects, kind):
    return [doc for doc in objects if doc.get("kind") == kind]


def named(objects, kind, name):
    found = [doc for doc in of_kind(objects, kind) if doc["metadata"]["name"] == name]
    return found[0] if found else None


def server_container(objects):
    deployment = named(objects, "Deployment", "slotserve")
    return deployment, deployment["spec"]["template"]["spec"]["containers"][0]


def flag(container, name):
    for arg in container.get("args", []):
        match = re.fullmatch(rf"--{name}=(.*)", arg)
        if match:
            return match.group(1)
    return None


def check_pool(objects, where, problems):
    pools = of_kind(objects, "InferencePool")
    if len(pools) != 1:
        problems.append(f"{where}: expected one InferencePool, found {len(pools)}")
        return
    pool = pools[0]
    deployment, container = server_container(objects)
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    selector = pool["spec"]["selector"]["matchLabels"]
    if not all(pod_labels.get(k) == v for k, v in selector.items()):
        problems.append(f"{where}: InferencePool selector {selector} does not select the server "
                        f"pods {pod_labels}")
    http_port = int(flag(container, "http-listen").rsplit(":", 1)[1])
    target = pool["spec"]["targetPorts"][0]["number"]
    if target != http_port:
        problems.append(f"{where}: InferencePool targets port {target}, but --http-listen "
                        f"serves the API and /metrics on {http_port}")
    declared = {p["containerPort"] for p in container.get("ports", [])}
    if target not in declared:
        problems.append(f"{where}: InferencePool port {target} is not a container port "
                        f"({sorted(declared)})")


def check_routes(objects, where, problems):
    for route in of_kind(objects, "HTTPRoute"):
        name = route["metadata"]["name"]
        for rule in route["spec"].get("rules", []):
            for ref in rule.get("backendRefs", []):
                kind = ref.get("kind", "Service")
                target = named(objects, kind, ref["name"])
                if target is None:
                    problems.append(f"{where}: HTTPRoute {name} sends to {kind} {ref['name']}, "
                                    "which the overlay does not have")
                elif kind == "Service" and ref.get("port") not in {
                        p["port"] for p in target["spec"]["ports"]}:
                    problems.append(f"{where}: HTTPRoute {name} names port {ref.get('port')} "
                                    f"of Service {ref['name']}, which has no such port")
                elif kind == "InferencePool" and ref.get("group") != \
                        "inference.networking.k8s.io":
                    problems.append(f"{where}: HTTPRoute {name}: an InferencePool backendRef "
                                    "needs group inference.networking.k8s.io")


def check_redis_overlay(objects, where, problems):
    _, container = server_container(objects)
    store = flag(container, "session-store") or ""
    if not store.startswith("redis://"):
        problems.append(f"{where}: --session-store={store}: the gateway may pick any replica, "
                        "so sessions must be shared (redis://)")
    if named(objects, "Service", "slotserve-redis") is None:
        problems.append(f"{where}: the Redis Service is missing")


def check_memory_overlay(objects, where, problems):
    _, container = server_container(objects)
    if flag(container, "session-store") != "memory":
        problems.append(f"{where}: --session-store={flag(container, 'session-store')}, "
                        "expected memory")
    for kind, name in (("Deployment", "slotserve-redis"), ("Service", "slotserve-redis"),
                       ("HorizontalPodAutoscaler", "slotserve")):
        if named(objects, kind, name) is not None:
            problems.append(f"{where}: {kind} {name} should be removed here")
    route = named(objects, "HTTPRoute", "slotserve-sessions")
    policy = named(objects, "BackendTrafficPolicy", "slotserve-session-affinity")
    if route is None or policy is None:
        problems.append(f"{where}: the sessions HTTPRoute or its BackendTrafficPolicy is missing")
        return
    matched = {h["name"] for rule in route["spec"]["rules"] for m in rule.get("matches", [])
               for h in m.get("headers", [])}
    hashed = policy["spec"]["loadBalancer"]["consistentHash"]["header"]["name"]
    if matched != {SESSION_HEADER} or hashed != SESSION_HEADER:
        problems.append(f"{where}: the route matches {sorted(matched)} and the policy hashes "
                        f"{hashed!r}; both must be {SESSION_HEADER!r}")
    targets = {(t["kind"], t["name"]) for t in policy["spec"]["targetRefs"]}
    if targets != {("HTTPRoute", "slotserve-sessions")}:
        problems.append(f"{where}: the policy must target only HTTPRoute slotserve-sessions, "
                        f"targets {sorted(targets)}")


def check_listed(directory, problems):
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    listed = {r for r in kustomization.get("resources", []) if r.endswith(".yaml")}
    listed |= {p["path"] for p in kustomization.get("patches", []) if "path" in p}
    on_disk = {p.name for p in directory.glob("*.yaml")} - {"kustomization.yaml"}
    if listed != on_disk:
        problems.append(f"{directory.name}/kustomization.yaml lists {sorted(listed)}, the "
                        f"directory has {sorted(on_disk)}")


def check_serving_runtime(path, problems):
    runtime = yaml.safe_load(path.read_text())
    container = runtime["spec"]["containers"][0]
    http_port = int(flag(container, "http-listen").rsplit(":", 1)[1])
    if http_port not in {p["containerPort"] for p in container.get("ports", [])}:
        problems.append(f"{path.name}: --http-listen port {http_port} is not a container port")
    probe = container.get("readinessProbe", {}).get("httpGet", {})
    if probe.get("path") != "/health" or probe.get("port") != http_port:
        problems.append(f"{path.name}: readiness must GET /health on port {http_port}, "
                        f"has {probe}")
    if flag(container, "model") != "/mnt/models":
        problems.append(f"{path.name}: --model must be /mnt/models, where KServe's storage "
                        "initializer puts the model")


def check(root):
    problems = []
    overlays_dir = root / "deploy" / "k8s-overlays"
    count = 0
    for name in OVERLAYS:
        directory = overlays_dir / name
        check_listed(directory, problems)
        before = len(problems)
        count += load_files(directory, problems)
        objects = kustomize(directory, problems)
        for doc in objects:  # the built objects, base included, as the cluster would get them
            problems.extend(schema_problems(doc, f"{name} (built) {doc.get('kind')}/"
                                                 f"{doc['metadata']['name']}"))
        if not objects or len(problems) > before:
            continue  # the cross-checks assume well-formed objects
        check_pool(objects, name, problems)
        check_routes(objects, name, problems)
        if name == "gateway":
            check_redis_overlay(objects, name, problems)
        else:
            check_memory_overlay(objects, name, problems)
    runtime = root / "deploy" / "k8s" / "kserve" / "servingruntime.yaml"
    before = len(problems)
    count += load_files(runtime.parent, problems)
    if len(problems) == before:
        check_serving_runtime(runtime, problems)
    return count, problems


def main():
    root = pathlib.Path(sys.argv[1])
    if kustomize_command() is None:
        print("neither kustomize nor kubectl is installed: the overlays cannot be built "
              "(install kustomize, or kubectl >= 1.27)")
        return 77
    count, problems = check(root)
    for problem in problems:
        print(f"FAIL {problem}")
    print(f"checked {count} files' objects and {len(OVERLAYS)} built overlays: "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
