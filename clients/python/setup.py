"""Generates the gRPC stubs (generate_stubs.py) before setuptools looks for the packages, so
`pip install clients/python` works from a clean checkout (offline: `--no-build-isolation`).
The metadata is in pyproject.toml."""

import pathlib
import subprocess
import sys

from setuptools import setup

HERE = pathlib.Path(__file__).resolve().parent

# The stubs are packages (slotserve.v1, slotserve._health.v1) that must exist for every step
# setuptools runs (metadata included), not only for build_py.
subprocess.run([sys.executable, str(HERE / "generate_stubs.py"), "--out", str(HERE)], check=True)
setup()
