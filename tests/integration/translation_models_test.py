#!/usr/bin/env python3
"""Every committed Spanish→English model (models/trained/es-en-*) loads in the real
slotserve-server and translates one held-out verse greedily, through slotserve-cli, to exactly
the text models/trained/translation_expected.json records (issue 13; no training in CI).

  translation_models_test.py SERVER CLI MODELS_DIR            # check (ctest)
  translation_models_test.py SERVER CLI MODELS_DIR --record   # rewrite the expected texts

The expected texts were produced by the C++ server (cpu backend) with the same command; the
server runs with --backend cpu here too, so a GPU machine checks the same numbers. The set of
models must match: a committed model without an expected text (or the reverse) fails.
"""

import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXPECTED_FILE = "translation_expected.json"
# Mark 1:1, test split (a held-out book: no verse of Mark is in the training split).
VERSE = "Mark 1:1"
SOURCE = "PRINCIPIO del evangelio de Jesucristo, Hijo de Dios."
REFERENCE = "The beginning of the Good News of Jesus Christ, the Son of God."
CLI_FLAGS = ["--temperature", "0", "--max-new-tokens", "128", "--quiet"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def translate(server, cli, model_dir):
    port = free_port()
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [server, f"--model={model_dir}", f"--listen=127.0.0.1:{port}",
             f"--metrics_listen=127.0.0.1:{free_port()}", "--backend=cpu", "--threads=1",
             "--max_slots=4"], stdout=log, stderr=subprocess.STDOUT)
        try:
            address = ["--server", f"127.0.0.1:{port}"]
            deadline = time.time() + 60
            while subprocess.run([cli, *address, "--timeout", "1s", "health"],
                                 capture_output=True).returncode != 0:
                if process.poll() is not None or time.time() > deadline:
                    log.seek(0)
                    raise AssertionError(f"{model_dir.name}: the server did not come up:\n"
                                         f"{log.read().decode(errors='replace')}")
                time.sleep(0.2)
            result = subprocess.run([cli, *address, "translate", "--source", SOURCE,
                                     *CLI_FLAGS], capture_output=True, timeout=120)
            if result.returncode != 0:
                raise AssertionError(f"{model_dir.name}: slotserve-cli translate exited "
                                     f"{result.returncode}: {result.stderr.decode()}")
            return result.stdout.decode().strip()
        finally:
            process.terminate()
            process.wait(timeout=60)


def main(argv):
    record = "--record" in argv
    server, cli, models = [a for a in argv if a != "--record"]
    models = Path(models)
    names = sorted(p.parent.name for p in models.glob("es-en-*/config.json"))
    if not names:
        print(f"no models/trained/es-en-* model in {models}", file=sys.stderr)
        return 1
    outputs = {name: translate(server, cli, models / name) for name in names}
    expected_path = models / EXPECTED_FILE
    if record:
        expected_path.write_text(json.dumps({
            "verse": VERSE, "source": SOURCE, "reference": REFERENCE,
            "command": "slotserve-cli translate --source SOURCE " + " ".join(CLI_FLAGS),
            "server": "slotserve-server --backend cpu --threads 1",
            "models": outputs}, ensure_ascii=False, indent=2) + "\n")
        print(f"recorded {len(outputs)} translations in {expected_path}")
        return 0
    expected = json.loads(expected_path.read_text())["models"]
    failures = []
    if sorted(expected) != names:
        failures.append(f"models on disk {names} != models in {EXPECTED_FILE} {sorted(expected)}")
    for name, text in outputs.items():
        status = "ok" if expected.get(name) == text else "MISMATCH"
        print(f"{status} {name}: {text!r}")
        if status != "ok":
            failures.append(f"{name}: got {text!r}, expected {expected.get(name)!r}")
    for failure in failures:
        print("FAIL", failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
