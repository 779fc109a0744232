"""A real slotserve-server on free loopback ports, for the Python integration tests: started with
port 0 for gRPC, HTTP and metrics, and the ports it chose read from its start-up line; and a
completions request to its HTTP API."""

import http.client
import json
import re
import subprocess
import sys
import time


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def start_server(server, model_dir, *flags):
    """(process, HTTP port, gRPC port) once the server listens; fails the test if it does not
    within a minute. `flags` are more command-line flags."""
    process = subprocess.Popen(
        [server, f"--model={model_dir}", "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
         "--http-listen=127.0.0.1:0", *flags],
        stderr=subprocess.PIPE, text=True)
    log = ""
    deadline = time.time() + 60
    while time.time() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        log += line
        http_port = re.search(r"HTTP API on http://127\.0\.0\.1:([0-9]+)", log)
        grpc_port = re.search(r"listening on 127\.0\.0\.1:([0-9]+)", log)
        if http_port and grpc_port:
            return process, int(http_port.group(1)), int(grpc_port.group(1))
    process.kill()
    fail(f"the server did not start:\n{log}")


def post_completion(port, body):
    """The body of POST /v1/completions with `body` as JSON (a stream's events as they came);
    fails the test on any status but 200."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    connection.request("POST", "/v1/completions", json.dumps(body),
                       {"Content-Type": "application/json"})
    response = connection.getresponse()
    raw = response.read().decode()
    if response.status != 200:
        fail(f"HTTP {response.status} for {json.dumps(body)[:200]}: {raw}")
    return raw
