#!/usr/bin/python3
"""Checks that every slotserve-server flag the deployment files pass (Dockerfile CMD, compose
commands, the Kubernetes Deployment's and the KServe ServingRuntime's args) is a flag the built
server knows, by its --help.
The server accepts --max-slots and --max_slots alike, so names are compared with hyphens.

Usage: check_server_flags.py REPO_ROOT SERVER_BIN
"""

import json
import pathlib
import re
import subprocess
import sys

import yaml


def flag_names(argv):
    return {re.match(r"--([\w-]+)", a).group(1).replace("_", "-")
            for a in argv if a.startswith("--")}


def used_flags(root):
    used = {}
    text = (root / "Dockerfile").read_text().replace("\\\n", " ")
    cmd = re.search(r"^CMD\s+(\[.*\])", text, re.MULTILINE)
    used["Dockerfile CMD"] = flag_names(json.loads(cmd.group(1)))
    for name in ("compose.yaml", "compose.gpu.yaml"):
        compose = yaml.safe_load((root / "deploy" / name).read_text())
        command = compose["services"]["slotserve"].get("command", [])
        used[f"deploy/{name}"] = flag_names(command)
    deployment = yaml.safe_load((root / "deploy" / "k8s" / "deployment.yaml").read_text())
    for container in deployment["spec"]["template"]["spec"]["containers"]:
        used["deploy/k8s/deployment.yaml"] = flag_names(container.get("args", []))
    runtime_path = root / "deploy" / "k8s" / "kserve" / "servingruntime.yaml"
    runtime = yaml.safe_load(runtime_path.read_text())
    for container in runtime["spec"]["containers"]:
        used["deploy/k8s/kserve/servingruntime.yaml"] = flag_names(container.get("args", []))
    return used


def main():
    root, server = pathlib.Path(sys.argv[1]), sys.argv[2]
    result = subprocess.run([server, "--help"], capture_output=True, text=True, timeout=60,
                            check=False)
    known = {name.replace("_", "-")
             for name in re.findall(r"^\s*--([\w-]+)", result.stdout + result.stderr,
                                    re.MULTILINE)}
    problems = []
    if "listen" not in known:
        problems.append(f"`{server} --help` lists no --listen flag; output:\n"
                        f"{result.stdout}{result.stderr}")
    for where, flags in used_flags(root).items():
        for flag in sorted(flags - known):
            problems.append(f"{where} passes --{flag}, which slotserve-server does not know")
        print(f"{where}: {', '.join(sorted(flags))}")
    for problem in problems:
        print(f"FAIL {problem}")
    print(f"server knows {len(known)} flags; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
