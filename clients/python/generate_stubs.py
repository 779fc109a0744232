#!/usr/bin/python3
"""Generates the slotserve Python client's gRPC stubs from the repository's proto/ files.

    generate_stubs.py [--proto-root DIR] [--out DIR] [--with-sources]

Writes slotserve/v1/slotserve_pb2{,_grpc}.py (+ .pyi) and slotserve/_health/v1/health_pb2*.py
under --out (default: beside this script, next to the package sources); --with-sources also
copies the package's own modules there, so --out becomes a complete, importable package root
(CMake builds one in the build tree that way).

Uses protoc (protobuf-compiler) and grpc_python_plugin (protobuf-compiler-grpc), which
scripts/install-deps.sh installs for the C++ build anyway. Not Debian 12's python3-grpc-tools:
its bundled protoc is 3.6, which refuses the proto3 `optional` fields of slotserve.proto.
"""

import argparse
import pathlib
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent

# (file under --proto-root, path it is compiled as). The path decides the Python module:
# slotserve.proto keeps its own (module slotserve.v1.slotserve_pb2, inside this package); the
# health protocol moves under the package, because a top-level "grpc" package would shadow
# grpcio itself.
PROTOS = [
    ("slotserve/v1/slotserve.proto", "slotserve/v1/slotserve.proto"),
    ("grpc/health/v1/health.proto", "slotserve/_health/v1/health.proto"),
]


def tool(name, package):
    path = shutil.which(name)
    if path is None:
        sys.exit(f"generate_stubs: {name} not found; install {package} (scripts/install-deps.sh)")
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--proto-root", type=pathlib.Path, default=HERE.parent.parent / "proto")
    parser.add_argument("--out", type=pathlib.Path, default=HERE)
    parser.add_argument("--with-sources", action="store_true")
    args = parser.parse_args()
    protoc = tool("protoc", "protobuf-compiler")
    plugin = tool("grpc_python_plugin", "protobuf-compiler-grpc")
    args.out.mkdir(parents=True, exist_ok=True)
    if args.with_sources:
        target = args.out / "slotserve"
        target.mkdir(exist_ok=True)
        for source in (HERE / "slotserve").glob("*.py"):
            shutil.copy2(source, target / source.name)
    with tempfile.TemporaryDirectory() as tree:
        compiled = []
        for source, as_path in PROTOS:
            destination = pathlib.Path(tree) / as_path
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(args.proto_root / source, destination)
            compiled.append(as_path)
        subprocess.run([protoc, f"--proto_path={tree}", f"--python_out={args.out}",
                        f"--pyi_out={args.out}", f"--grpc_out={args.out}",
                        f"--plugin=protoc-gen-grpc={plugin}", *compiled], check=True)
    for package in ("slotserve/v1", "slotserve/_health", "slotserve/_health/v1"):
        (args.out / package / "__init__.py").touch()
    print(f"generate_stubs: stubs in {args.out / 'slotserve'}")


if __name__ == "__main__":
    main()
