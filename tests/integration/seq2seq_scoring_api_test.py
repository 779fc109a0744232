"""Scoring translations through the HTTP API against the engine's own tool, on the bundled
translation model and committed held-out verse pairs (models/trained/es-en-test-ruth-24.*.ids).

A client scores a translation by sending its source as `source`, the translation as `prompt`
(token ids), `echo` with `logprobs`, and one token to generate. The decoder reads
decoder_start_id before the prompt, so every prompt token is scored, none null; the generated
token, forced to eos by `logit_bias` (logprobs stay the model's own), scores the translation's
end. slotserve-perplexity --source-ids/--target-ids computes the same sum by calling the model
directly (models/tools/seq2seq_perplexity.cc). A real server, real clients (HTTP, and gRPC
through the Python client with logprobs.prompt): the sums must agree for each pair, streamed and
not, and an empty prompt echoes nothing but is still answered.

    seq2seq_scoring_api_test.py SERVER PERPLEXITY_TOOL MODEL_DIR SOURCE_IDS TARGET_IDS
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from loopback_server import fail, post_completion, start_server

PAIRS = 4
RELATIVE_TOLERANCE = 1e-4


def scoring_body(source, target, eos, stream):
    return {"source": source, "prompt": target, "max_tokens": 1, "temperature": 0,
            "echo": True, "logprobs": 0, "logit_bias": {str(eos): 100}, "stream": stream}


def api_logprobs(port, source, target, eos):
    """Every token_logprob of the answer, not streamed: the prompt's, then the generated one."""
    answer = json.loads(post_completion(port, scoring_body(source, target, eos, stream=False)))
    return answer["choices"][0]["logprobs"]["token_logprobs"]


def streamed_logprobs(port, source, target, eos):
    """The same, gathered from the stream's chunks in order."""
    logprobs = []
    events = post_completion(port, scoring_body(source, target, eos, stream=True))
    for line in events.splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        for choice in json.loads(line[len("data: "):])["choices"]:
            if choice.get("logprobs"):
                logprobs += choice["logprobs"]["token_logprobs"]
    return logprobs


def grpc_logprobs(port, source, target, eos):
    """The same through gRPC (the Python client, when its directory is on PYTHONPATH): the
    prompt's scores (LogprobsOptions.prompt), then the generated token's."""
    import slotserve  # clients/python, generated stubs included
    with slotserve.Client(f"127.0.0.1:{port}") as client:
        completion = client.complete(target, source=source, max_new_tokens=1, temperature=0,
                                     logprobs=0, prompt_logprobs=True, logit_bias={eos: 100})
    return [s.logprob for s in completion.prompt_logprobs] + [s.logprob for s in
                                                              completion.logprobs]


def tool_nll(tool, model_dir, source, target):
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "src").write_text(" ".join(map(str, source)) + "\n")
        (Path(tmp) / "tgt").write_text(" ".join(map(str, target)) + "\n")
        done = subprocess.run([tool, "--model", model_dir, "--source-ids", f"{tmp}/src",
                               "--target-ids", f"{tmp}/tgt"], capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"slotserve-perplexity failed: {done.stderr}")
    result = json.loads(done.stdout)
    if result["tokens"] != len(target) + 1:
        fail(f"slotserve-perplexity scored {result['tokens']} tokens, not {len(target) + 1}")
    return result["nll"]


def main():
    server, tool, model_dir, source_ids, target_ids = sys.argv[1:6]
    read = lambda path: [[int(t) for t in line.split()]
                         for line in Path(path).read_text().splitlines()]
    pairs = list(zip(read(source_ids), read(target_ids)))[:PAIRS]
    eos = json.loads((Path(model_dir) / "config.json").read_text())["eos_id"]
    expected = [tool_nll(tool, model_dir, source, target) for source, target in pairs]

    process, port, grpc_port = start_server(server, model_dir, "--threads=1", "--max-slots=4")
    forms = [("answer", api_logprobs, port), ("stream", streamed_logprobs, port)]
    if os.environ.get("SLOTSERVE_WITH_PYTHON_CLIENT") == "1":
        forms.append(("gRPC", grpc_logprobs, grpc_port))
    try:
        for index, ((source, target), nll) in enumerate(zip(pairs, expected)):
            for form, fetch, form_port in forms:
                logprobs = fetch(form_port, source, target, eos)
                if len(logprobs) != len(target) + 1 or any(v is None for v in logprobs):
                    fail(f"pair {index + 1} ({form}): expected {len(target)} prompt scores and "
                         f"one generated, none null; got {len(logprobs)}: {logprobs[:3]}...")
                api = -sum(logprobs)
                difference = abs(api - nll) / nll
                print(f"pair {index + 1} ({form}, {len(target)} target tokens): API nll "
                      f"{api:.6f}, slotserve-perplexity {nll:.6f}, relative {difference:.2e}")
                if difference > RELATIVE_TOLERANCE:
                    fail(f"pair {index + 1} ({form}): the API's nll {api} is not "
                         f"slotserve-perplexity's {nll}")

        # No prompt (it is optional beside a source), so nothing to score: the echo is empty
        # and the generated token is still scored.
        body = scoring_body(pairs[0][0], [], eos, stream=False)
        del body["prompt"]
        choice = json.loads(post_completion(port, body))["choices"][0]
        logprobs = choice["logprobs"]["token_logprobs"]
        if len(logprobs) != 1 or logprobs[0] is None or choice["logprobs"]["tokens"] != [""]:
            fail(f"no prompt: expected only the generated eos with its logprob, got "
                 f"{json.dumps(choice)}")
        body["stream"] = True
        events = post_completion(port, body).splitlines()
        chunks = [json.loads(line[len("data: "):]) for line in events
                  if line.startswith("data: ") and line != "data: [DONE]"]
        streamed = [v for chunk in chunks for c in chunk["choices"] if c.get("logprobs")
                    for v in c["logprobs"]["token_logprobs"]]
        if streamed != logprobs:
            fail(f"no prompt, streamed: logprobs {streamed}, not the answer's {logprobs}")
    finally:
        process.terminate()
        process.wait(timeout=60)
    print(f"OK: {PAIRS} translations scored through the API as slotserve-perplexity scores them")


if __name__ == "__main__":
    main()
