#!/usr/bin/python3
"""Proves check_k8s_gateway.py can fail: copies deploy/ into a temporary tree, breaks one thing
at a time in the gateway overlays or the serving runtime, and expects the checker to name it.

Usage: test_check_k8s_gateway.py REPO_ROOT
"""

import pathlib
import shutil
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_k8s_gateway  # noqa: E402

GATEWAY = "k8s-overlays/gateway/"
MEMORY = "k8s-overlays/gateway-memory-sessions/"
# (file under deploy/, text to replace, replacement, a phrase the checker must print)
MUTATIONS = [
    (GATEWAY + "inferencepool.yaml", "- number: 8000", "- number: 9464",
     "but --http-listen serves the API and /metrics on 8000"),
    (GATEWAY + "inferencepool.yaml", "component: server", "component: srv",
     "does not select the server pods"),
    (GATEWAY + "inferencepool.yaml", "failureMode: FailOpen", "failureMode: Open",
     "'Open' is not one of"),
    (GATEWAY + "inferencepool.yaml", "  targetPorts:", "  targetPortNumbers:",
     "unknown field 'targetPortNumbers'"),
    (GATEWAY + "inferencepool.yaml", "    port:\n      number: 9002\n", "",
     "port is required for a Service"),
    (GATEWAY + "inferencepool.yaml", "      number: 9002", "      number: \"9002\"",
     "expected an integer"),
    (GATEWAY + "httproute.yaml", "          name: slotserve\n", "          name: slotserve-pool\n",
     "which the overlay does not have"),
    (GATEWAY + "httproute.yaml", "group: inference.networking.k8s.io",
     "group: inference.networking.x-k8s.io", "needs group inference.networking.k8s.io"),
    (GATEWAY + "httproute.yaml", "type: PathPrefix", "type: Prefix", "'Prefix' is not one of"),
    (GATEWAY + "httproute.yaml", "request: 600s", "request: 10 minutes",
     "is not a Gateway API duration"),
    (GATEWAY + "kustomization.yaml", "  - httproute.yaml\n", "", "the directory has"),
    (MEMORY + "memory-session-store.yaml", "--session-store=memory",
     "--session-store=redis://slotserve-redis:6379", "expected memory"),
    (MEMORY + "kustomization.yaml", "  - path: delete-autoscaler.yaml\n", "",
     "HorizontalPodAutoscaler slotserve should be removed here"),
    (MEMORY + "session-affinity-policy.yaml", "name: x-slotserve-session",
     "name: x-session", "both must be 'x-slotserve-session'"),
    (MEMORY + "session-affinity-policy.yaml", "type: ConsistentHash", "type: Sticky",
     "'Sticky' is not one of"),
    (MEMORY + "session-httproute.yaml", "port: 8000", "port: 8080", "has no such port"),
    ("k8s/kserve/servingruntime.yaml", "containerPort: 8080", "containerPort: 8000",
     "is not a container port"),
    ("k8s/kserve/servingruntime.yaml", "--model=/mnt/models", "--model=/models",
     "where KServe's storage initializer puts the model"),
    ("k8s/kserve/servingruntime.yaml", "multiModel: false", "multiModel: \"no\"",
     "expected true or false"),
]


def main():
    repo = pathlib.Path(sys.argv[1])
    if check_k8s_gateway.kustomize_command() is None:
        print("neither kustomize nor kubectl is installed (see check_k8s_gateway.py)")
        return 77
    _, problems = check_k8s_gateway.check(repo)
    if problems:
        print("\n".join(problems))
        print("FAIL the unmodified manifests do not pass; fix them first")
        return 1
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for file_name, old, new, expected in MUTATIONS:
            root = pathlib.Path(tmp) / "tree"
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(repo / "deploy", root / "deploy")
            target = root / "deploy" / file_name
            text = target.read_text()
            if old not in text:
                failures.append(f"{file_name}: mutation anchor {old!r} not found (update test)")
                continue
            target.write_text(text.replace(old, new, 1))
            _, problems = check_k8s_gateway.check(root)
            output = "\n".join(problems)
            if expected not in output:
                failures.append(f"{file_name}: {old!r} -> {new!r}: expected {expected!r}, "
                                f"got:\n{output or '(no problem found)'}")
    for failure in failures:
        print(f"FAIL {failure}")
    print(f"{len(MUTATIONS)} mutations, {len(failures)} not caught")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
