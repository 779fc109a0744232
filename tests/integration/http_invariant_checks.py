"""What the HTTP API invariant tests share (http_api_invariants_test.py on a decoder-only model,
http_seq2seq_invariants_test.py on a translation model): the requests, a stream folded into a
whole answer's shape, the checks that hold for any completions choice, and the run itself.

A failed check is recorded, not raised, so that one run lists every violation, each on one line:
what was sent, what came back, what was expected. A request not answered 200 is itself a
violation and raises ApiError, which skips only the checks that needed its answer.
"""

import http.client
import json
import math
import subprocess
import sys
import time
from pathlib import Path

from loopback_server import start_server

ROOT = Path(__file__).resolve().parents[2]

# Logprobs of one request read twice (a stream against its whole answer) are the same numbers;
# of two requests that prefill differently (echo: the prompt from its first token) nearly so.
SAME = 1e-5
CLOSE = 2e-3

# How logprobs.tokens shows a byte-fallback token: one UTF-8 byte of a character that the
# tokenizer spells as several <0xNN> pieces ("ú", curly quotes), not a character on its own.
BYTE_TOKEN = "\ufffd"

violations = []
checks_run = 0


def short(value, limit=400):
    text = json.dumps(value, ensure_ascii=False)  # one line: newlines escaped
    return text if len(text) <= limit else text[:limit] + "..."


def violated(what, sent, got, expected):
    violations.append(f"VIOLATION {what} | sent {short(sent)} | got {short(got)} | "
                      f"expected {short(expected)}")


def check(condition, what, sent, got, expected):
    global checks_run
    checks_run += 1
    if not condition:
        violated(what, sent, got, expected)
    return condition


# --- Requests -------------------------------------------------------------------------------

class ApiError(Exception):
    pass


def request(port, path, body=None, method="POST"):
    """(status, raw body) of one request."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        if body is None:
            connection.request(method, path)
        else:
            connection.request(method, path, json.dumps(body),
                               {"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def post(port, path, body):
    """The JSON answer; an answer other than 200 is a violation and raises ApiError."""
    status, raw = request(port, path, body)
    if not check(status == 200, f"{path} answers 200", body, f"HTTP {status}: {raw}",
                 "HTTP 200"):
        raise ApiError(raw)
    return json.loads(raw)


def complete(port, body):
    return post(port, "/v1/completions", body)


def chat(port, body):
    return post(port, "/v1/chat/completions", body)


def tokenize(port, prompt, add_special_tokens=True, strs=False):
    return post(port, "/tokenize", {"prompt": prompt, "add_special_tokens": add_special_tokens,
                                    "return_token_strs": strs})


def detokenize(port, ids):
    return post(port, "/detokenize", {"tokens": ids})["prompt"]


def survives_normalisation(port, text):
    """Whether the tokenizer's pieces spell `text` as sent: its normaliser collapses repeated
    spaces, drops leading and trailing ones and turns newlines into spaces, and echo of a text
    prompt returns the prompt as sent while scoring those pieces."""
    return detokenize(port, tokenize(port, text, add_special_tokens=False)["tokens"]) == text


def texts(answer):
    return [c["text"] for c in sorted(answer["choices"], key=lambda c: c["index"])]


def stream(port, path, body):
    """A stream's chunks, checked for its framing: every event `data: <json>`, `[DONE]` last
    and once, no error event, one id."""
    status, raw = request(port, path, body)
    if not check(status == 200, f"{path} (stream) answers 200", body, f"HTTP {status}: {raw}",
                 "HTTP 200"):
        raise ApiError(raw)
    # The server writes as many tokens per chunk as it has when it writes, so the number of
    # events varies from run to run: each check below is one over the whole stream.
    lines = [line for line in raw.split("\n") if line and not line.startswith(":")]
    check(all(line.startswith("data: ") for line in lines), "every SSE line is 'data: ...'",
          body, [line for line in lines if not line.startswith("data: ")][:3],
          "data: <json> or data: [DONE]")
    datas = [line[len("data: "):] for line in lines if line.startswith("data: ")]
    check(datas and datas[-1] == "[DONE]" and datas.count("[DONE]") == 1,
          "a stream ends with exactly one data: [DONE]", body, datas[-3:], "... , [DONE]")
    chunks = [json.loads(d) for d in datas if d != "[DONE]"]
    check(not [chunk for chunk in chunks if "error" in chunk], "a stream carries no error event",
          body, [chunk for chunk in chunks if "error" in chunk][:1], "no error")
    ids = {chunk.get("id") for chunk in chunks}
    check(len(ids) == 1, "every chunk of a stream has the same id", body, sorted(map(str, ids)),
          "one id")
    return chunks


def merge_completion_stream(body, chunks):
    """A completions stream folded into a whole answer's shape: {"choices": [...], "usage"}."""
    include_usage = bool(body.get("stream_options", {}).get("include_usage"))
    usage = None
    if include_usage and chunks:
        check(chunks[-1].get("choices") == [] and isinstance(chunks[-1].get("usage"), dict),
              "include_usage: the last chunk has empty choices and the usage", body,
              chunks[-1], '{"choices": [], "usage": {...}}')
        usage = chunks[-1].get("usage")
        chunks = chunks[:-1]
        check(all("usage" in chunk and chunk["usage"] is None for chunk in chunks),
              "include_usage: every chunk but the last has usage null", body,
              [chunk for chunk in chunks if chunk.get("usage") is not None][:1], '"usage": null')
    choices = {}
    late = []  # chunks of a choice after its finish_reason
    for chunk in chunks:
        for choice in chunk.get("choices", []):
            merged = choices.setdefault(choice["index"], {
                "index": choice["index"], "text": "", "logprobs": None, "finish_reasons": [],
                "token_ids": None})
            if merged["finish_reasons"]:
                late.append(chunk)
            merged["text"] += choice.get("text", "")
            if choice.get("logprobs"):
                if merged["logprobs"] is None:
                    merged["logprobs"] = {key: [] for key in ("tokens", "token_logprobs",
                                                              "top_logprobs", "text_offset")}
                for key in merged["logprobs"]:
                    merged["logprobs"][key] += choice["logprobs"][key]
            if "token_ids" in choice:
                merged["token_ids"] = (merged["token_ids"] or []) + choice["token_ids"]
            if choice.get("finish_reason") is not None:
                merged["finish_reasons"].append(choice["finish_reason"])
    check(not late, "no chunk of a choice comes after its finish_reason", body, late[:1],
          "nothing after the choice's finish_reason")
    for merged in choices.values():
        check(len(merged["finish_reasons"]) == 1, "every streamed choice gets one finish_reason",
              body, {"index": merged["index"], "finish_reasons": merged["finish_reasons"]},
              "exactly one")
        merged["finish_reason"] = (merged["finish_reasons"] or [None])[0]
    return {"choices": [choices[i] for i in sorted(choices)], "usage": usage}


# --- Checks of one answer -------------------------------------------------------------------

def close(a, b, tolerance):
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, abs_tol=tolerance, rel_tol=0)


def lists_close(a, b, tolerance):
    return len(a) == len(b) and all(close(x, y, tolerance) for x, y in zip(a, b))


def check_indices(sent, answer, count):
    indices = [choice["index"] for choice in answer["choices"]]
    check(sorted(indices) == list(range(count)), "choice indices are 0..n-1, each once", sent,
          indices, list(range(count)))


def check_usage(sent, usage, prompt_tokens=None, completion_tokens=None):
    if not check(isinstance(usage, dict), "usage is present", sent, usage, "a usage object"):
        return
    check(usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"],
          "usage.total_tokens = prompt_tokens + completion_tokens", sent, usage, "the sum")
    if prompt_tokens is not None:
        check(usage["prompt_tokens"] == prompt_tokens, "usage.prompt_tokens", sent, usage,
              f"prompt_tokens {prompt_tokens}")
    if completion_tokens is not None:
        check(usage["completion_tokens"] == completion_tokens, "usage.completion_tokens", sent,
              usage, f"completion_tokens {completion_tokens}")


def walk_text(tokens, text):
    """(offsets, end): where each token must start in `text`, in code points, and where the last
    ends. A byte token is one UTF-8 byte of the text's next character: the tokens that continue a
    character share its offset, and the token after its last byte starts right after it."""
    offsets = []
    position = 0
    bytes_left = 0  # of the character that byte tokens are spelling
    for token in tokens:
        offsets.append(position)
        for character in token:
            if character != BYTE_TOKEN:
                position += 1
                continue
            if bytes_left == 0:
                # Past the end of the text (cut by a stop) a byte is taken as a whole character.
                bytes_left = len(text[position].encode()) if position < len(text) else 1
            bytes_left -= 1
            if bytes_left == 0:
                position += 1
    return offsets, position


def check_tokens_spell_text(sent, tokens, offsets, text, stopped):
    """The tokens against the text they were decoded into. A stop string cuts the text inside
    the token that completes it, which logprobs keep whole (as vLLM does): then the tokens before
    it spell a prefix of the text and the text is a prefix of all of them."""
    expected, end = walk_text(tokens, text)
    check(offsets == expected, "text_offset[i] = code points of the text completed before token "
          "i (the bytes of one character share its offset)", sent,
          {"text_offset": offsets, "tokens": tokens, "text": text}, expected)
    if not any(BYTE_TOKEN in token for token in tokens):
        joined = "".join(tokens)
        if stopped and tokens:
            before = "".join(tokens[:-1])
            check(text.startswith(before) and joined.startswith(text),
                  "stop: the tokens before the last spell a prefix of the text, and the text is "
                  "a prefix of all tokens joined", sent, {"tokens": tokens, "text": text},
                  "tokens[:-1] joined <= text <= tokens joined")
        else:
            check(joined == text, "logprobs.tokens concatenate to the text", sent,
                  {"tokens": tokens, "joined": joined}, {"text": text})
        return
    # Byte tokens: each whole token where the walk puts it, each byte token on a character of
    # more than one byte, and (not stopped) the tokens end where the text does.
    misplaced = []
    for i, (token, offset) in enumerate(zip(tokens, expected)):
        cut_here = stopped and i == len(tokens) - 1
        if BYTE_TOKEN in token:
            fits = cut_here or (offset < len(text) and len(text[offset].encode()) > 1)
        else:
            fits = (token.startswith(text[offset:]) if cut_here
                    else text[offset:offset + len(token)] == token)
        if not fits:
            misplaced.append((i, token, offset))
    check(not misplaced and (stopped or end == len(text)),
          "logprobs.tokens spell the text (a byte token on a multi-byte character)", sent,
          {"text": text, "misplaced (i, token, offset)": misplaced[:4], "end": end},
          f"every token in place, ending at {len(text)}")


def check_completion_logprobs(sent, choice, top_n, greedy, first_null=False,
                              unspelled_prompt=None):
    """One completions choice's logprobs against its text. `first_null`: an echoed decoder-only
    prompt's first token is unscored (null). `unspelled_prompt`: (entries, text) of an echoed
    text prompt that the tokenizer normalises, so its pieces do not spell it: only the generated
    entries are held against the text after it, their offsets relative to the first of them."""
    logprobs = choice["logprobs"]
    if not check(isinstance(logprobs, dict), "logprobs present when asked", sent, choice,
                 "a logprobs object"):
        return
    tokens = logprobs["tokens"]
    for key in ("token_logprobs", "top_logprobs", "text_offset"):
        check(len(logprobs[key]) == len(tokens), f"len(logprobs.{key}) = len(tokens)", sent,
              {key: len(logprobs[key]), "tokens": len(tokens)}, "equal lengths")
    stopped = choice.get("finish_reason") == "stop" and bool(sent.get("stop"))
    if unspelled_prompt is None:
        check_tokens_spell_text(sent, tokens, logprobs["text_offset"], choice["text"], stopped)
    else:
        entries, prompt = unspelled_prompt
        offsets = logprobs["text_offset"][entries:]
        check_tokens_spell_text(sent, tokens[entries:], [o - offsets[0] for o in offsets],
                                choice["text"][len(prompt):], stopped)
    for i in range(min(len(tokens), len(logprobs["token_logprobs"]),
                       len(logprobs["top_logprobs"]))):
        value = logprobs["token_logprobs"][i]
        top = logprobs["top_logprobs"][i]
        if first_null and i == 0:
            check(value is None and top is None, "an echoed prompt's first token is null", sent,
                  {"token_logprobs[0]": value, "top_logprobs[0]": top}, "null, null")
            continue
        if not check(value is not None and top is not None, "every token is scored (no null)",
                     sent, {"i": i, "token": tokens[i], "token_logprob": value, "top": top},
                     "a number and an object"):
            continue
        check(value <= 0.0, "token_logprobs <= 0", sent, {"i": i, "value": value}, "<= 0")
        check(len(top) in (top_n, top_n + 1), "len(top_logprobs[i]) is logprobs or logprobs+1",
              sent, {"i": i, "token": tokens[i], "top": top}, f"{top_n} or {top_n + 1} entries")
        check(tokens[i] in top and close(top[tokens[i]], value, 1e-9),
              "top_logprobs[i][tokens[i]] = token_logprobs[i]", sent,
              {"i": i, "token": tokens[i], "token_logprob": value, "top": top},
              f"top_logprobs[{i}][{tokens[i]!r}] == {value}")
        if greedy and top:
            check(value >= max(top.values()) - 1e-6,
                  "temperature 0: the chosen token is the most likely", sent,
                  {"i": i, "token": tokens[i], "token_logprob": value, "top": top},
                  "token_logprob = max(top_logprobs)")


# --- Checks of two answers that must agree --------------------------------------------------

def check_same_choice(what, sent, got, want, tolerance):
    """The same text, finish_reason, tokens, offsets, token_ids and (within `tolerance`)
    logprobs."""
    check(got["text"] == want["text"], f"{what}: same text", sent, got["text"], want["text"])
    check(got.get("finish_reason") == want.get("finish_reason"), f"{what}: same finish_reason",
          sent, got.get("finish_reason"), want.get("finish_reason"))
    if "token_ids" in want:
        check(got.get("token_ids") == want["token_ids"], f"{what}: same token_ids", sent,
              got.get("token_ids"), want["token_ids"])
    g, w = got.get("logprobs"), want.get("logprobs")
    if not check((g is None) == (w is None), f"{what}: logprobs both present or both null",
                 sent, g, w) or g is None:
        return
    check(g["tokens"] == w["tokens"], f"{what}: same logprobs.tokens", sent, g["tokens"],
          w["tokens"])
    check(g["text_offset"] == w["text_offset"], f"{what}: same text_offset", sent,
          g["text_offset"], w["text_offset"])
    check(lists_close(g["token_logprobs"], w["token_logprobs"], tolerance),
          f"{what}: same token_logprobs (+-{tolerance})", sent, g["token_logprobs"],
          w["token_logprobs"])
    g_keys = [sorted(t) if t else t for t in g["top_logprobs"]]
    w_keys = [sorted(t) if t else t for t in w["top_logprobs"]]
    check(g_keys == w_keys, f"{what}: same top_logprobs keys", sent, g_keys, w_keys)


def check_stream_equals(port, body, whole):
    """The same completions request streamed (with include_usage) gives the whole answer's
    choices and usage."""
    streamed_body = dict(body, stream=True, stream_options={"include_usage": True})
    merged = merge_completion_stream(streamed_body,
                                     stream(port, "/v1/completions", streamed_body))
    check([c["index"] for c in merged["choices"]] == [c["index"] for c in whole["choices"]],
          "stream: the same choice indices", streamed_body,
          [c["index"] for c in merged["choices"]], [c["index"] for c in whole["choices"]])
    whole_choices = sorted(whole["choices"], key=lambda c: c["index"])
    for got, want in zip(merged["choices"], whole_choices):
        check_same_choice("stream vs whole", streamed_body, got, want, SAME)
    check(merged["usage"] == whole["usage"], "stream include_usage: usage = the whole answer's",
          streamed_body, merged["usage"], whole["usage"])


def check_prompt_case(port, body, prompt_tokens, echo_text, echo_entries, first_null,
                      echo_spelled):
    """One temperature-0 request `body` (with logprobs, return_token_ids), whole and streamed,
    then echoed, whole and streamed; returns the plain answer. prompt_tokens: what usage counts
    for the prompt; echo_text: what echo puts before the generated text; echo_entries: the
    logprob entries echo adds, first of them null when `first_null`; echo_spelled: whether those
    entries' tokens spell echo_text (see check_completion_logprobs)."""
    top_n, max_tokens = body["logprobs"], body["max_tokens"]
    base = complete(port, body)
    choice = base["choices"][0]
    check_indices(body, base, 1)
    check_completion_logprobs(body, choice, top_n, greedy=True)
    generated = len(choice["logprobs"]["tokens"])
    check(len(choice.get("token_ids", [])) == generated,
          "return_token_ids: len(token_ids) = generated logprob tokens", body,
          choice.get("token_ids"), f"{generated} ids")
    check_usage(body, base["usage"], prompt_tokens=prompt_tokens, completion_tokens=generated)
    if choice["finish_reason"] == "length":
        check(generated == max_tokens, "finish_reason length: completion_tokens = max_tokens",
              body, base["usage"], f"completion_tokens {max_tokens}")
    check_stream_equals(port, body, base)

    echo_body = dict(body, echo=True)
    echoed = complete(port, echo_body)
    echo_choice = echoed["choices"][0]
    check(echo_choice["text"] == echo_text + choice["text"],
          "echo: text = the prompt (as sent, or Decode(ids)) + the generated text", echo_body,
          echo_choice["text"], echo_text + choice["text"])
    check_completion_logprobs(echo_body, echo_choice, top_n, greedy=False, first_null=first_null,
                              unspelled_prompt=None if echo_spelled else (echo_entries, echo_text))
    logprobs = echo_choice["logprobs"]
    check(len(logprobs["tokens"]) == echo_entries + generated,
          "echo + logprobs: one entry per prompt token, then per generated token", echo_body,
          {"tokens": logprobs["tokens"], "usage": echoed["usage"]},
          f"{echo_entries} + {generated} entries")
    if len(logprobs["tokens"]) >= generated:
        tail = {key: values[len(values) - generated:] for key, values in logprobs.items()}
        check(tail["tokens"] == choice["logprobs"]["tokens"],
              "echo: the generated part's tokens = the answer without echo", echo_body,
              tail["tokens"], choice["logprobs"]["tokens"])
        check(lists_close(tail["token_logprobs"], choice["logprobs"]["token_logprobs"], CLOSE),
              "echo: the generated part's logprobs = the answer without echo", echo_body,
              tail["token_logprobs"], choice["logprobs"]["token_logprobs"])
    check(echoed["usage"] == base["usage"], "echo does not change usage", echo_body,
          echoed["usage"], base["usage"])
    check_stream_equals(port, echo_body, echoed)
    return base


# --- The run --------------------------------------------------------------------------------

def run(default_model, parts):
    """Starts the server (argv: [SERVER [MODEL_DIR]], else the build's and `default_model`,
    relative to the repository), runs each part against its HTTP port, prints every violation
    and the count of checks; the exit status: 1 when any check was violated."""
    server = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build/server/slotserve-server")
    model_dir = sys.argv[2] if len(sys.argv) > 2 else str(ROOT / default_model)
    started = time.time()
    # One compute thread: the same numbers on any machine, and ctest may run tests side by side.
    process, port, _ = start_server(server, model_dir, "--threads=1", "--max-slots=16")
    try:
        for part in parts:
            try:
                part(port)
            except ApiError:
                pass  # already a violation; the part's later checks needed that answer
            except Exception as error:  # an answer of the wrong shape: the next part still runs
                violated(f"{part.__name__} runs to its end", part.__name__,
                         f"{type(error).__name__}: {error}", "no exception")
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
    for line in violations:
        print(line)
    elapsed = time.time() - started
    if violations:
        print(f"FAIL: {len(violations)} of {checks_run} checks violated ({elapsed:.1f} s)")
        return 1
    print(f"PASS: all {checks_run} checks held ({elapsed:.1f} s)")
    return 0
