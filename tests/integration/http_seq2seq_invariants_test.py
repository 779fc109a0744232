"""Invariants of the OpenAI-compatible HTTP API beside a `source`, checked against a real server
on loopback with the encoder-decoder (Spanish->English) models/trained/es-en-abc-m32-long: the
source as text and as token ids, a target prefix (`prompt`) as text, as ids or empty, echo
scoring (docs/TRANSLATION.md), n, best_of and beam search beside a source, and the refusal of
chat.

Deterministic (temperature 0, or fixed seeds). Every violated invariant is printed on one line
(sent, got, expected) and the script exits 1; it exits 0 printing the number of checks when all
hold. The decoder-only model's invariants are http_api_invariants_test.py's.

    http_seq2seq_invariants_test.py [SERVER [MODEL_DIR]]
"""

import json
import sys

from http_invariant_checks import (SAME, ApiError, check, check_completion_logprobs,
                                   check_indices, check_prompt_case, check_same_choice,
                                   check_stream_equals, complete, detokenize, request, run,
                                   survives_normalisation, texts, tokenize)

EOS = 2
SPANISH = "Y murió Elimelech, marido de Noemi, y quedó ella con sus dos hijos;"
SPANISH_2 = "Como está escrito en Isaías el profeta:"
PREFIX = "Elimelech"


def pieces(port, text):
    """A text's token ids as a source or a target prefix carries them: no BOS."""
    return tokenize(port, text, add_special_tokens=False)["tokens"]


def check_sources_and_prefixes(port):
    """Each source and prefix form, plain and echoed. usage counts the decoder's inputs:
    decoder_start_id, then the prefix (README); echo scores every prefix token (none null: the
    start token comes before them) and puts the prefix before the translation, as sent when a
    text, Decode(ids) when ids."""
    # The server appends eos to a text source (README): the same ids sent give the same answer.
    source_ids = pieces(port, SPANISH) + [EOS]
    prefix_ids = pieces(port, PREFIX)
    cases = {
        "text, no prefix": (SPANISH, None),
        "ids, no prefix": (source_ids, None),
        "text, text prefix": (SPANISH, PREFIX),
        "text, ids prefix": (SPANISH, prefix_ids),
        "ids, text prefix": (source_ids, PREFIX),
        "text, empty prefix": (SPANISH, ""),
        "text 2, prefix": (SPANISH_2, "As it is"),
        "text 2, no prefix": (SPANISH_2, None),
        "text, prefix with a leading space": (SPANISH, " " + PREFIX),
        "text, ids prefix of one token": (SPANISH, prefix_ids[:1]),
        # "ï" is two byte tokens in this tokenizer (text_offset: the bytes share one offset).
        "text, prefix with a byte-fallback character": (SPANISH, "The naïve"),
    }
    answers = {}
    for name, (source, prefix) in cases.items():
        body = {"source": source, "max_tokens": 6, "temperature": 0, "logprobs": 2,
                "return_token_ids": True}
        if prefix is not None:
            body["prompt"] = prefix
        prefix = prefix or ""
        is_text = isinstance(prefix, str)
        count = len(pieces(port, prefix) if is_text else prefix) if prefix else 0
        try:
            answers[name] = check_prompt_case(
                port, body, prompt_tokens=1 + count,
                echo_text=prefix if is_text else detokenize(port, prefix), echo_entries=count,
                first_null=False,
                echo_spelled=not is_text or not prefix or survives_normalisation(port, prefix))
        except ApiError:
            pass
    for a, b in [("ids, no prefix", "text, no prefix"), ("text, ids prefix", "text, text prefix"),
                 ("ids, text prefix", "text, text prefix"),
                 ("text, empty prefix", "text, no prefix")]:
        if a in answers and b in answers:
            check_same_choice(f"{a} vs {b}", {"source": SPANISH, "case": a},
                              answers[a]["choices"][0], answers[b]["choices"][0], SAME)
    if "text, no prefix" in answers:
        text = answers["text, no prefix"]["choices"][0]["text"]
        check(not text.startswith(" "), "translation without a prefix: no leading space",
              {"source": SPANISH}, text, "text without SentencePiece's leading space")


def check_empty_prefix_forms(port):
    """An empty target prefix as token ids (prompt []) is a translation without a prefix, as the
    empty string is: the same answer."""
    body = {"source": SPANISH, "max_tokens": 4, "temperature": 0, "logprobs": 1, "echo": True,
            "return_token_ids": True}
    as_text = complete(port, dict(body, prompt=""))
    sent = dict(body, prompt=[])
    status, raw = request(port, "/v1/completions", sent)
    if not check(status == 200, "prompt [] (an empty prefix as ids) is accepted as \"\" is",
                 sent, f"{status} {raw}", "200, the translation without a prefix"):
        return
    as_ids = json.loads(raw)
    check_same_choice("prompt [] vs prompt \"\"", sent, as_ids["choices"][0],
                      as_text["choices"][0], SAME)
    check(as_ids["usage"] == as_text["usage"], "prompt [] vs prompt \"\": same usage", sent,
          as_ids["usage"], as_text["usage"])


def check_scoring(port):
    """Scoring a given translation (docs/TRANSLATION.md): the translation as the prefix, echo +
    logprobs, eos forced by logit_bias."""
    body = {"source": SPANISH, "prompt": "Elimelech, Naomi's husband, died.", "echo": True,
            "logprobs": 0, "max_tokens": 1, "logit_bias": {str(EOS): 100}, "temperature": 0,
            "return_token_ids": True}
    answer = complete(port, body)
    choice = answer["choices"][0]
    check(choice["token_ids"] == [EOS] and choice["finish_reason"] == "stop",
          "scoring: logit_bias +100 forces eos, finish_reason stop", body,
          {"token_ids": choice["token_ids"], "finish_reason": choice["finish_reason"]},
          f"[{EOS}], stop")
    check_completion_logprobs(body, choice, 0, greedy=False)
    check(len(choice["logprobs"]["tokens"]) == len(pieces(port, body["prompt"])) + 1,
          "scoring: one entry per translation token, then eos", body,
          choice["logprobs"]["tokens"], "prefix tokens + 1")
    check_stream_equals(port, body, answer)


def check_choices(port):
    """n, best_of and beam search beside a source: deterministic, the prompt counted once."""
    prefix_count = len(pieces(port, PREFIX))
    for body, count in [
        ({"source": SPANISH, "n": 2, "max_tokens": 5, "temperature": 1.0, "seed": 9,
          "logprobs": 1}, 2),
        ({"source": SPANISH, "n": 2, "best_of": 3, "max_tokens": 5, "temperature": 1.0,
          "seed": 9}, 2),
        ({"source": SPANISH, "use_beam_search": True, "best_of": 3, "n": 2, "max_tokens": 6},
         2),
        ({"source": SPANISH, "prompt": PREFIX, "use_beam_search": True, "best_of": 3, "n": 3,
          "max_tokens": 4}, 3),
    ]:
        try:
            first = complete(port, body)
            check_indices(body, first, count)
            second = complete(port, body)
            check(texts(first) == texts(second), "seq2seq choices deterministic across calls",
                  body, texts(second), texts(first))
            expected_prompt = 1 + (prefix_count if "prompt" in body else 0)
            check(first["usage"]["prompt_tokens"] == expected_prompt,
                  "seq2seq usage: prompt counted once (start + prefix)", body, first["usage"],
                  f"prompt_tokens {expected_prompt}")
            if "logprobs" in body:
                for choice in first["choices"]:
                    check_completion_logprobs(body, choice, 1, greedy=False)
            if "best_of" not in body or body.get("use_beam_search"):
                check_stream_equals(port, body, first)
        except ApiError:
            pass

    # n > 1, echo + logprobs: every choice carries the prefix's scores.
    body = {"source": SPANISH, "prompt": PREFIX, "n": 2, "max_tokens": 3, "temperature": 1.0,
            "seed": 4, "echo": True, "logprobs": 1, "return_token_ids": True}
    answer = complete(port, body)
    check_indices(body, answer, 2)
    for choice in answer["choices"]:
        check(choice["text"].startswith(PREFIX), "seq2seq n + echo: prefix first", body,
              choice["text"], f"{PREFIX!r}...")
        check_completion_logprobs(body, choice, 1, greedy=False)
        check(len(choice["logprobs"]["tokens"]) == prefix_count + len(choice["token_ids"]),
              "seq2seq n + echo + logprobs: every choice carries the prefix's scores", body,
              choice["logprobs"]["tokens"], f"{prefix_count} + generated entries")
    check_stream_equals(port, body, answer)


def check_refusals(port):
    body = {"messages": [{"role": "user", "content": "Hola"}], "max_tokens": 2}
    status, raw = request(port, "/v1/chat/completions", body)
    check(status == 400 and '"param":"messages"' in raw.replace(" ", ""),
          "seq2seq: chat refused with 400 naming messages", body, f"{status} {raw}",
          '400 with "param": "messages"')


if __name__ == "__main__":
    sys.exit(run("models/trained/es-en-abc-m32-long",
                 [check_refusals, check_sources_and_prefixes, check_empty_prefix_forms,
                  check_scoring, check_choices]))
