#!/usr/bin/env python3
"""Tests of check_layering.py: small source trees, one clean and others each with one planted
violation, checked by running the checker on them as CI runs it on the repository.

Usage: check_layering_test.py (no arguments; the trees are made in a temporary folder).
"""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

CHECKER = Path(__file__).resolve().parent / "check_layering.py"

# A tree of the repository's shape in which every rule holds.
CLEAN_TREE = {
    "base/status.h": "#pragma once\n#include <string>\n",
    "engine/scheduler.h": '#pragma once\n#include "base/status.h"\n',
    "server/generation_gateway.h": '#pragma once\n#include "engine/scheduler.h"\n',
    "server/generation_gateway.cc": '#include "server/generation_gateway.h"\n',
    "server/tls_files.h": '#pragma once\n#include <string>\n',
    "server/http/http_listener.h": '#pragma once\n#include "server/tls_files.h"\n',
    "server/http/openai_generation.cc": ('#include "server/generation_gateway.h"\n'
                                         '#include <httplib.h>\n'),
    "server/grpc/grpc_submission.h": ('#pragma once\n#include <grpcpp/server_context.h>\n'
                                      '#include "server/generation_gateway.h"\n'
                                      '#include "slotserve/v1/slotserve.pb.h"\n'),
    "server/grpc/generate_call.cc": '#include "server/grpc/grpc_submission.h"\n',
}


def run_checker(files):
    """(exit status, output) of the checker on a tree of `files` (path -> text)."""
    with tempfile.TemporaryDirectory() as root:
        for relative, text in files.items():
            path = Path(root) / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        done = subprocess.run([sys.executable, str(CHECKER), root], capture_output=True,
                              text=True, check=False)
        return done.returncode, done.stdout


def planted(path, text):
    files = dict(CLEAN_TREE)
    files[path] = text
    return files


class CheckLayeringTest(unittest.TestCase):
    def test_a_clean_tree_passes(self):
        status, output = run_checker(CLEAN_TREE)
        self.assertEqual(status, 0, output)
        self.assertIn(f"{len(CLEAN_TREE)} passed, 0 failed", output)

    def test_an_include_of_a_floor_above_fails(self):
        status, output = run_checker(
            planted("base/status.h", '#pragma once\n#include "engine/scheduler.h"\n'))
        self.assertEqual(status, 1)
        self.assertIn("base/status.h:2: base/ includes engine/scheduler.h, a floor above it",
                      output)

    def test_the_engine_including_grpc_fails(self):
        status, output = run_checker(
            planted("engine/scheduler.h", '#pragma once\n#include <grpcpp/grpcpp.h>\n'))
        self.assertEqual(status, 1)
        self.assertIn("engine/scheduler.h:2: engine/ includes grpcpp/grpcpp.h", output)

    def test_the_http_front_end_including_a_grpc_header_fails(self):
        status, output = run_checker(
            planted("server/http/openai_generation.cc",
                    '#include "server/generation_gateway.h"\n#include <grpcpp/grpcpp.h>\n'))
        self.assertEqual(status, 1)
        self.assertIn("server/http/openai_generation.cc:2: includes grpcpp/grpcpp.h", output)

    def test_the_http_front_end_reaching_protobuf_through_a_header_fails(self):
        status, output = run_checker(
            planted("server/tls_files.h",
                    '#pragma once\n#include <grpcpp/security/server_credentials.h>\n'))
        self.assertEqual(status, 1)
        self.assertIn("server/http/http_listener.h:2: includes server/tls_files.h -> "
                      "grpcpp/security/server_credentials.h", output)

    def test_the_gateway_including_the_wire_api_fails(self):
        status, output = run_checker(
            planted("server/generation_gateway.cc",
                    '#include "server/generation_gateway.h"\n'
                    '#include "server/grpc/grpc_submission.h"\n'))
        self.assertEqual(status, 1)
        self.assertIn("server/generation_gateway.cc:2: includes server/grpc/grpc_submission.h"
                      " -> grpcpp/server_context.h", output)

    def test_grpc_files_may_include_grpc(self):
        status, output = run_checker(
            planted("server/grpc/status_mapping.h",
                    '#pragma once\n#include <grpcpp/support/status.h>\n'))
        self.assertEqual(status, 0, output)


if __name__ == "__main__":
    unittest.main()
