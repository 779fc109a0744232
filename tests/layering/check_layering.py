#!/usr/bin/env python3
"""Checks the shape DESIGN §1 and docs/ARCHITECTURE.md promise, from the source text alone:

1. Dependencies point down the floors: a file may include only its own floor and the floors
   below it (base < kernels < models < engine < server; proto is the wire API, which only
   server/, clients/, bench/ and tests may use; python/ is never included by C++).
2. The engine links neither gRPC nor protobuf: nothing under engine/ (or below) includes a
   grpc or protobuf header.
3. No source file is longer than the limit (600 lines, with a little slack: 650).

Usage: check_layering.py REPO_ROOT. Prints every violation and a closing
'N passed, N failed' line (one check per source file); exits 1 on any violation.
"""
import re
import sys
from pathlib import Path

FLOORS = ["base", "kernels", "models", "engine", "server"]
# Folders above every floor: they may include any floor (and proto).
TOP = {"clients", "bench", "tests"}
WIRE = ("slotserve/v1/", "grpc/", "grpcpp/", "google/protobuf/")
MAX_LINES = 650
INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^">]+)[">]')
SOURCES = ("*.cc", "*.h", "*.cu", "*.cuh")


def floor_of(path):
    top = path.parts[0]
    return FLOORS.index(top) if top in FLOORS else None


def check_file(root, path):
    problems = []
    relative = path.relative_to(root)
    lines = path.read_text(errors="replace").splitlines()
    if len(lines) > MAX_LINES:
        problems.append(f"{relative}: {len(lines)} lines (limit {MAX_LINES}); split it by concept")
    floor = floor_of(relative)
    for number, line in enumerate(lines, 1):
        match = INCLUDE.match(line)
        if not match:
            continue
        target = match.group(1)
        where = f"{relative}:{number}"
        if floor is not None and floor < FLOORS.index("server") and target.startswith(WIRE):
            problems.append(f"{where}: {FLOORS[floor]}/ includes {target} (gRPC/protobuf are "
                            "the server's business; the engine and below take plain C++ types)")
        head = target.split("/")[0]
        if floor is not None and head in FLOORS and FLOORS.index(head) > floor:
            problems.append(f"{where}: {FLOORS[floor]}/ includes {target}, a floor above it")
        if floor is not None and head in TOP:
            problems.append(f"{where}: {FLOORS[floor]}/ includes {target} from {head}/")
    return problems


def main():
    root = Path(sys.argv[1]).resolve()
    files = []
    for folder in FLOORS + sorted(TOP):
        for pattern in SOURCES:
            files.extend(p for p in (root / folder).rglob(pattern) if "build" not in p.parts)
    failed = 0
    for path in sorted(set(files)):
        problems = check_file(root, path)
        for problem in problems:
            print(problem)
        failed += bool(problems)
    print(f"{len(set(files)) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
