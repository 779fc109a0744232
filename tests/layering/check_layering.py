#!/usr/bin/env python3
"""Checks the shape docs/ARCHITECTURE.md "Floors" and docs/ARCHITECTURE.md promise, from the source
text alone:

1. Dependencies point down the floors: a file may include only its own floor and the floors
   below it (base < kernels < models < engine < server; proto is the wire API, which only
   server/, clients/, bench/ and tests may use; python/ is never included by C++).
2. The engine links neither gRPC nor protobuf: nothing under engine/ (or below) includes a
   grpc or protobuf header.
3. The HTTP front end and the generation gateway both front ends share stay neutral: no file
   under server/http/ and no server/generation_gateway.* includes a gRPC, protobuf or
   slotserve/v1 header, directly or through the project's own headers (server/grpc/ is
   where gRPC lives).
4. No source file is longer than the limit (600 lines, with a little slack: 650).

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
# Files that must compile without gRPC and protobuf although they sit on the server floor.
NEUTRAL = ("server/http/", "server/generation_gateway.")


def floor_of(path):
    top = path.parts[0]
    return FLOORS.index(top) if top in FLOORS else None


def includes_of(path):
    """(line number, included path) of each #include in `path`."""
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        match = INCLUDE.match(line)
        if match:
            yield number, match.group(1)


def wire_include_chain(root, target, seen):
    """The chain of project headers from `target` to a gRPC/protobuf header, or None."""
    if target.startswith(WIRE):
        return [target]
    header = root / target
    if target in seen or not header.is_file():
        return None
    seen.add(target)
    for _, included in includes_of(header):
        chain = wire_include_chain(root, included, seen)
        if chain:
            return [target] + chain
    return None


def check_neutral(root, relative):
    problems = []
    seen = set()
    for number, target in includes_of(root / relative):
        chain = wire_include_chain(root, target, seen)
        if chain:
            problems.append(f"{relative}:{number}: includes {' -> '.join(chain)} (the HTTP "
                            "front end and the gateway take engine types only; gRPC's parts "
                            "belong in server/grpc/)")
    return problems


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
    if relative.as_posix().startswith(NEUTRAL):
        problems.extend(check_neutral(root, relative))
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
