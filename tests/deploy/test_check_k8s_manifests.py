#!/usr/bin/python3
"""Proves check_k8s_manifests.py can fail: copies deploy/k8s and the Dockerfile into a
temporary tree, breaks one thing at a time, and expects the checker to name it.

Usage: test_check_k8s_manifests.py REPO_ROOT
"""

import pathlib
import shutil
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_k8s_manifests  # noqa: E402

# (file, text to replace, replacement, a phrase the checker must print)
MUTATIONS = [
    ("deployment.yaml", "--session-store=redis://slotserve-redis:6379",
     "--session-store=redis://redis:6379", "is not the session store's Service"),
    ("redis.yaml", "      targetPort: redis", "      targetPort: valkey", "is not a container port"),
    ("deployment.yaml", "readinessProbe:", "readinessProbes:", "unknown field 'readinessProbes'"),
    ("deployment.yaml", "              port: 50051\n            periodSeconds: 2\n            timeoutSeconds",
     "              port: \"50051\"\n            periodSeconds: 2\n            timeoutSeconds",
     "expected an integer"),
    ("deployment.yaml", "        - name: slotserve\n", "        - image_name: slotserve\n",
     "unknown field 'image_name'"),
    ("deployment.yaml", "terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: 45",
     "must exceed preStop"),
    ("deployment.yaml", "memory: 16Gi\n              nvidia.com/gpu: 1", "memory: 16Gi",
     "does not request a GPU"),
    ("deployment.yaml", "memory: 16Gi", "memory: 16Gigs", "not a Kubernetes quantity"),
    ("deployment.yaml", "--listen=0.0.0.0:50051", "--listen=0.0.0.0:50052",
     "is not the grpc containerPort"),
    ("deployment.yaml", "--drain-timeout=45s", "--drain-timeout=45", "is not a duration"),
    ("deployment.yaml", "--drain-timeout=45s", "--drain-timeout=1m", "must exceed preStop"),
    ("deployment.yaml", "failureThreshold: 6", "failureThreshold: 2", "a draining pod would be"),
    ("deployment.yaml", "runAsUser: 10001", "runAsUser: 1000", "is not the Dockerfile's USER"),
    ("service.yaml", "targetPort: metrics", "targetPort: metric", "is not a container port"),
    ("service.yaml", "  clusterIP: None\n", "", "no headless Service"),
    ("servicemonitor.yaml", "- port: metrics", "- port: metrix", "is not a port of Service"),
    ("servicemonitor.yaml", "interval: 5s", "interval: 5", "is not a Prometheus duration"),
    ("servicemonitor.yaml", "scrapeTimeout: 4s", "scrapeTimeOut: 4s", "unknown field 'scrapeTimeOut'"),
    ("hpa.yaml", "    name: slotserve\n  minReplicas", "    name: slotserve-old\n  minReplicas",
     "scaleTargetRef is not the slotserve Deployment"),
    ("hpa.yaml", "name: slotserve_requests_queued", "name: slotserve_requests_running",
     "is not exposed by prometheus-adapter-rules.yaml"),
    ("hpa.yaml", "averageValue: \"8\"", "averageValu: \"8\"", "unknown field 'averageValu'"),
    ("poddisruptionbudget.yaml", "component: server", "component: srv",
     "PodDisruptionBudget: selector does not match"),
    ("kustomization.yaml", "  - hpa.yaml\n", "", "differ from the manifests on disk"),
]


def run_checker(root):
    _, problems = check_k8s_manifests.check(root)
    return (1 if problems else 0), "\n".join(problems)


def main():
    repo = pathlib.Path(sys.argv[1])
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        code, output = run_checker(repo)
        if code != 0:
            print(output)
            print("FAIL the unmodified manifests do not pass; fix them first")
            return 1
        for file_name, old, new, expected in MUTATIONS:
            root = tmp / "tree"
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(repo / "deploy" / "k8s", root / "deploy" / "k8s")
            shutil.copy(repo / "Dockerfile", root / "Dockerfile")
            target = root / "deploy" / "k8s" / file_name
            text = target.read_text()
            if old not in text:
                failures.append(f"{file_name}: mutation anchor {old!r} not found (update test)")
                continue
            target.write_text(text.replace(old, new, 1))
            code, output = run_checker(root)
            if code == 0 or expected not in output:
                failures.append(f"{file_name}: {old!r} -> {new!r}: expected exit 1 and "
                                f"{expected!r}, got exit {code}:\n{output}")
    for failure in failures:
        print(f"FAIL {failure}")
    print(f"{len(MUTATIONS)} mutations, {len(failures)} not caught")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
