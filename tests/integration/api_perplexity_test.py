"""Perplexity through the HTTP API against the engine's own tool, on a bundled trained model
and a held-out text (the book of Ruth, tokenised: models/trained/kjv-test-ruth-512.ids).

An evaluation harness scores a text by sending it as a prompt with echo and logprobs and
summing the prompt tokens' log probabilities. slotserve-perplexity computes the same window's
negative log-likelihood by calling the model directly (models/tools/slotserve_perplexity.cc).
A real server, a real HTTP client: the two sums must agree, the first time and again when the
server's prefix cache holds the prompt's blocks (which prompt scoring must not use).

    api_perplexity_test.py SERVER PERPLEXITY_TOOL MODEL_DIR IDS_FILE
"""

import json
import subprocess
import sys
import tempfile

from loopback_server import fail, post_completion, start_server

WINDOW = 200
RELATIVE_TOLERANCE = 1e-4


def api_nll(port, prompt_ids):
    body = {"prompt": prompt_ids, "max_tokens": 1, "temperature": 0, "echo": True,
            "logprobs": 0}
    answer = json.loads(post_completion(port, body))
    logprobs = answer["choices"][0]["logprobs"]["token_logprobs"]
    if len(logprobs) != len(prompt_ids) + 1 or logprobs[0] is not None:
        fail(f"expected {len(prompt_ids)} prompt entries (the first null) and one generated, "
             f"got {len(logprobs)}, the first {logprobs[0]}")
    return -sum(logprobs[1:len(prompt_ids)])


def main():
    server, tool, model_dir, ids_file = sys.argv[1:5]
    with open(ids_file) as f:
        window = [int(token) for token in f.read().split()[:WINDOW]]
    with open(f"{model_dir}/config.json") as f:
        bos = json.load(f)["bos_id"]
    with tempfile.NamedTemporaryFile("w", suffix=".ids") as ids:
        ids.write(" ".join(map(str, window)) + "\n")
        ids.flush()
        tool_run = subprocess.run([tool, "--model", model_dir, "--ids", ids.name, "--window",
                                   str(WINDOW)], capture_output=True, text=True, check=True)
    expected = json.loads(tool_run.stdout)
    if expected["tokens"] != WINDOW:
        fail(f"slotserve-perplexity scored {expected['tokens']} tokens, not {WINDOW}")

    process, port, _ = start_server(server, model_dir, "--threads=1", "--max-slots=2",
                                    "--prefix-block=32")
    try:
        for attempt in ("first", "with the prompt's blocks in the prefix cache"):
            nll = api_nll(port, [bos] + window)
            difference = abs(nll - expected["nll"]) / expected["nll"]
            print(f"{attempt}: API nll {nll:.6f}, slotserve-perplexity {expected['nll']:.6f}, "
                  f"relative difference {difference:.2e}")
            if difference > RELATIVE_TOLERANCE:
                fail(f"{attempt}: the API's nll {nll} is not slotserve-perplexity's "
                     f"{expected['nll']}")
    finally:
        process.terminate()
        process.wait(timeout=60)
    print(f"OK: perplexity {expected['perplexity']:.4f} over {WINDOW} tokens both ways")


if __name__ == "__main__":
    main()
