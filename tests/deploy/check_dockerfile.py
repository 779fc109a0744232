#!/usr/bin/python3
"""Checks the Dockerfile's promises without a Docker engine:

  - the build stage runs the project's own scripts (install-deps.sh, build.sh with tests off,
    make-default-model.sh), the same recipe CI runs, and every script it names exists;
  - the base images come from build arguments whose defaults carry a tag (the reason the
    linter's missing_tag rule is off), with a runtime default that is the slim image;
  - the runtime stage runs as a numeric non-root USER, EXPOSEs the gRPC and metrics ports its
    CMD listens on, has an exec-form HEALTHCHECK through `slotserve-cli ... health`, and its
    ENTRYPOINT is the server;
  - .dockerignore keeps host build trees out of the build context.

Usage: check_dockerfile.py REPO_ROOT. Prints every problem; exit 1 if any.
"""

import json
import pathlib
import re
import sys


def instructions(text):
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    result = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            result.append((word.upper(), rest.strip()))
    return result


def main():
    root = pathlib.Path(sys.argv[1])
    problems = []

    def require(condition, message):
        if not condition:
            problems.append(message)

    steps = instructions((root / "Dockerfile").read_text())
    froms = [i for i, (word, _) in enumerate(steps) if word == "FROM"]
    require(len(froms) == 2, f"expected two stages (build, runtime), found {len(froms)} FROM")
    if len(froms) != 2:
        return report(problems)
    build, runtime = steps[froms[0]:froms[1]], steps[froms[1]:]

    args = dict(re.match(r"(\w+)=?(.*)", rest).groups() for word, rest in steps[:froms[0]]
                if word == "ARG")
    for stage_steps, arg in ((build, "BUILD_IMAGE"), (runtime, "RUNTIME_IMAGE")):
        require(stage_steps[0][1].startswith(f"${{{arg}}}"),
                f"stage {stage_steps[0][1]!r} does not take its base from ARG {arg}")
        default = args.get(arg, "")
        require(re.fullmatch(r"[\w./-]+:[\w.-]+", default) is not None,
                f"ARG {arg} default {default!r} has no tag")
    require(args.get("RUNTIME_IMAGE", "").endswith("-slim"),
            "the runtime base image default is not a -slim image")

    build_runs = " ".join(rest for word, rest in build if word == "RUN")
    for script in ("scripts/install-deps.sh", "scripts/build.sh", "scripts/make-default-model.sh"):
        require(script in build_runs, f"the build stage does not run {script}")
    require("-DSLOTSERVE_BUILD_TESTS=OFF" in build_runs,
            "the build stage does not turn the tests off (-DSLOTSERVE_BUILD_TESTS=OFF)")
    for script in set(re.findall(r"\b((?:scripts|deploy)/[\w./-]+\.sh)\b", build_runs)):
        require((root / script).is_file(), f"the build stage runs {script}, which does not exist")

    last = {word: rest for word, rest in runtime}
    user = last.get("USER", "")
    require(re.fullmatch(r"[1-9]\d*(:\d+)?", user) is not None,
            f"runtime USER {user!r} is not a numeric non-root uid")
    exposed = set(last.get("EXPOSE", "").split())
    cmd = json.loads(last.get("CMD", "[]"))
    listens = {cmd[i + 1].rsplit(":", 1)[1] for i, flag in enumerate(cmd[:-1])
               if flag in ("--listen", "--metrics-listen")}
    require(len(listens) == 2 and listens <= exposed,
            f"EXPOSE {sorted(exposed)} does not cover the CMD's listen ports {sorted(listens)}")
    health = last.get("HEALTHCHECK", "")
    match = re.search(r"\bCMD\s+(\[.*\])", health)
    require(match is not None, "HEALTHCHECK is missing or not in exec form")
    if match:
        argv = json.loads(match.group(1))
        require(argv[0] == "slotserve-cli" and argv[-1] == "health",
                f"HEALTHCHECK {argv} is not `slotserve-cli ... health` (gRPC health service)")
    require(json.loads(last.get("ENTRYPOINT", "[]")) == ["slotserve-server"],
            "ENTRYPOINT is not [\"slotserve-server\"]")

    ignored = (root / ".dockerignore").read_text().split()
    for pattern in ("build", "build-*"):
        require(pattern in ignored, f".dockerignore does not exclude {pattern}")
    return report(problems)


def report(problems):
    for problem in problems:
        print(f"FAIL {problem}")
    print(f"Dockerfile: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
