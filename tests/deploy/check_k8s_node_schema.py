#!/usr/bin/python3
"""Feeds every Kubernetes object of deploy/k8s (Kustomization excepted: not an API object)
to k8s_schema_node.cjs, the kubernetes-models JSON-schema validator.

Usage: check_k8s_node_schema.py REPO_ROOT NODE_TOOLS_DIR
Exit 77 (ctest: skipped) when node or the node tools are not installed
(tests/deploy/node-tools/install.sh installs them).
"""

import json
import pathlib
import shutil
import subprocess
import sys

import yaml

SKIP = 77
NOT_OBJECTS = {"prometheus-adapter-rules.yaml", "kustomization.yaml"}


def main():
    root = pathlib.Path(sys.argv[1])
    modules = pathlib.Path(sys.argv[2]) / "node_modules"
    node = shutil.which("node")
    if node is None or not (modules / "kubernetes-models").is_dir():
        print(f"SKIP: needs node and kubernetes-models in {modules} "
              "(run tests/deploy/node-tools/install.sh)")
        return SKIP
    objects = []
    for path in sorted((root / "deploy" / "k8s").glob("*.yaml")):
        if path.name in NOT_OBJECTS:
            continue
        for index, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if doc is not None:
                objects.append({"where": f"{path.name}#{index}", "object": doc})
    script = pathlib.Path(__file__).resolve().parent / "k8s_schema_node.cjs"
    result = subprocess.run([node, str(script)], input=json.dumps(objects), text=True,
                            env={"NODE_PATH": str(modules), "PATH": "/usr/bin:/bin"},
                            check=False)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
