"""Invariants of the OpenAI-compatible HTTP API that a client of OpenAI's or vLLM's API relies
on, checked against a real server on loopback with the decoder-only models/trained/kjv-abc-m32:
completions (text and token-id prompts, echo, logprobs), streams, n, best_of, beam search,
prompt batches, stop strings, logit_bias, the prefix cache, /tokenize and chat.

Deterministic (temperature 0, or fixed seeds). Every violated invariant is printed on one line
(sent, got, expected) and the script exits 1; it exits 0 printing the number of checks when all
hold. The translation model's invariants are http_seq2seq_invariants_test.py's.

    http_api_invariants_test.py [SERVER [MODEL_DIR]]
"""

import sys

from http_invariant_checks import (BYTE_TOKEN, SAME, ApiError, chat, check,
                                   check_completion_logprobs, check_indices, check_prompt_case,
                                   check_same_choice, check_stream_equals, check_usage, complete,
                                   detokenize, post, request, run, stream,
                                   survives_normalisation, texts, tokenize)

BOS = 1
GENESIS = "In the beginning God created the heaven"


def prompt_count(port, prompt):
    """The prompt tokens usage counts: BOS, then the text's pieces (or the ids as sent)."""
    return len(prompt) if isinstance(prompt, list) else len(tokenize(port, prompt)["tokens"])


def prompt_list(prompt):
    """A request's prompts: a batch (a list of texts or of id lists), else the one prompt."""
    is_batch = isinstance(prompt, list) and prompt and not isinstance(prompt[0], int)
    return prompt if is_batch else [prompt]


def check_refusals(port):
    body = {"prompt": "And", "source": "Y", "max_tokens": 2}
    status, raw = request(port, "/v1/completions", body)
    check(status == 400 and '"param":"source"' in raw.replace(" ", ""),
          "decoder-only: source refused with 400 naming it", body, f"{status} {raw}",
          '400 with "param": "source"')


def check_tokenize(port):
    with_bos = tokenize(port, GENESIS)["tokens"]
    without_bos = tokenize(port, GENESIS, add_special_tokens=False)["tokens"]
    check(with_bos[1:] == without_bos and with_bos[0] == BOS,
          "/tokenize add_special_tokens false drops (only) BOS", {"prompt": GENESIS},
          {"with": with_bos, "without": without_bos}, "with = [1] + without")
    # "a\nb" and the double space are normalised (to "a b", one space): their round trip is the
    # normalised text, which itself must then round-trip unchanged.
    for text in [GENESIS + " and the earth.", "And", "LORD, LORD!", "Jesús dijo “paz”", "a\nb",
                 "And God  said "]:
        answer = tokenize(port, text, strs=True)
        check(answer["count"] == len(answer["tokens"]) == len(answer["token_strs"]),
              "/tokenize count = len(tokens) = len(token_strs)", {"prompt": text}, answer,
              "equal")
        back = detokenize(port, answer["tokens"])
        bare_back = detokenize(port, tokenize(port, text, add_special_tokens=False)["tokens"])
        check(bare_back == back, "/detokenize skips BOS: the same text with or without it",
              {"prompt": text}, bare_back, back)
        again = detokenize(port, tokenize(port, back)["tokens"])
        check(again == back, "/tokenize then /detokenize is stable on its own output",
              {"prompt": back}, again, back)
        if "\n" not in text and "  " not in text:
            check(back == text, "/detokenize(/tokenize(text)) = text (normalisation-stable text)",
                  {"prompt": text}, {"tokens": answer["tokens"], "detokenized": back}, text)


def check_prompts(port):
    """Text and token-id prompts, plain and echoed: echo of ids is Decode(ids); echo of text is
    the text as sent, whose pieces spell it only when it survives normalisation."""
    with_bos = tokenize(port, GENESIS)["tokens"]
    without_bos = with_bos[1:]
    prompts = {"text": GENESIS, "ids with BOS": with_bos, "ids without BOS": without_bos,
               "short text": "And", "BOS only": [BOS], "single space": " ",
               "non-ASCII text": "Jesús dijo “paz”", "double space": "And God  said "}
    answers = {}
    for name, prompt in prompts.items():
        is_text = isinstance(prompt, str)
        count = prompt_count(port, prompt)
        body = {"prompt": prompt, "max_tokens": 6, "temperature": 0, "logprobs": 2,
                "return_token_ids": True}
        try:
            answers[name] = check_prompt_case(
                port, body, prompt_tokens=count,
                echo_text=prompt if is_text else detokenize(port, prompt), echo_entries=count,
                first_null=True, echo_spelled=not is_text or survives_normalisation(port, prompt))
        except ApiError:
            pass
    if "text" in answers and "ids with BOS" in answers:
        check_same_choice("ids prompt vs its text", {"prompt": with_bos, "vs": GENESIS},
                          answers["ids with BOS"]["choices"][0], answers["text"]["choices"][0],
                          SAME)


def check_stops(port):
    body = {"prompt": GENESIS, "max_tokens": 10, "temperature": 0, "logprobs": 1,
            "return_token_ids": True}
    free = complete(port, body)["choices"][0]
    words = free["text"].split()
    stops = ["\u00a7never"]  # never met
    if len(words) >= 4:
        stops += [" " + words[2],                  # a whole token
                  words[2][:2],                    # part of a token
                  [words[3][1:], " " + words[1]]]  # a list: the earliest one met cuts
    for stop in stops:
        sent = dict(body, stop=stop)
        try:
            answer = complete(port, sent)
        except ApiError:
            continue
        choice = answer["choices"][0]
        stop_list = stop if isinstance(stop, list) else [stop]
        cut = min([free["text"].find(s) for s in stop_list if s in free["text"]], default=-1)
        if cut >= 0:
            check(choice["finish_reason"] == "stop", "stop met: finish_reason stop", sent,
                  choice["finish_reason"], "stop")
            check(choice["text"] == free["text"][:cut],
                  "stop: text = the free text before the stop", sent, choice["text"],
                  free["text"][:cut])
            # The token that completes the stop is kept whole in logprobs and token_ids.
            tokens = choice["logprobs"]["tokens"]
            check(any(s in "".join(tokens) for s in stop_list) and
                  not any(s in "".join(tokens[:-1]) for s in stop_list),
                  "stop: the last token kept is the one that completes the stop", sent, tokens,
                  f"{stop_list!r} completed by the last token")
            check(choice["token_ids"] == free["token_ids"][:len(choice["token_ids"])],
                  "stop: token_ids are the free answer's up to the stop", sent,
                  choice["token_ids"], free["token_ids"])
        else:
            check(choice["text"] == free["text"], "stop never met: text unchanged", sent,
                  choice["text"], free["text"])
        for s in stop_list:
            check(s not in choice["text"], "stop: the text never contains the stop string", sent,
                  choice["text"], f"no {s!r}")
        check_completion_logprobs(sent, choice, 1, greedy=True)
        check(len(choice["token_ids"]) == answer["usage"]["completion_tokens"] ==
              len(choice["logprobs"]["tokens"]),
              "stop: completion_tokens = len(token_ids) = len(logprobs.tokens)", sent,
              {"usage": answer["usage"], "token_ids": choice["token_ids"],
               "tokens": choice["logprobs"]["tokens"]}, "all equal")
        check_stream_equals(port, sent, answer)
        # Echo with a stop: the prompt is echoed whole, stops apply to the generated text.
        echo_sent = dict(sent, echo=True)
        try:
            echoed = complete(port, echo_sent)["choices"][0]
            check(echoed["text"] == GENESIS + choice["text"], "stop + echo: prompt + stopped text",
                  echo_sent, echoed["text"], GENESIS + choice["text"])
            check_completion_logprobs(echo_sent, echoed, 1, greedy=False, first_null=True)
        except ApiError:
            pass


def check_max_tokens(port):
    for max_tokens in (1, 2, 5):
        body = {"prompt": "And God said", "max_tokens": max_tokens, "temperature": 0,
                "ignore_eos": True}
        try:
            answer = complete(port, body)
        except ApiError:
            continue
        check(answer["choices"][0]["finish_reason"] == "length" and
              answer["usage"]["completion_tokens"] == max_tokens,
              "max_tokens honoured exactly (ignore_eos)", body,
              {"finish_reason": answer["choices"][0]["finish_reason"], "usage": answer["usage"]},
              f"length, completion_tokens {max_tokens}")


def check_echoed_choices(port, body, answer):
    """Every choice of an echoed (batch) answer starts with its own prompt and, with logprobs,
    carries that prompt's entries before its generated ones."""
    prompts = prompt_list(body["prompt"])
    per_prompt = len(answer["choices"]) // len(prompts)
    for choice in answer["choices"]:
        prompt = prompts[choice["index"] // per_prompt]
        prompt_text = prompt if isinstance(prompt, str) else detokenize(port, prompt)
        check(choice["text"].startswith(prompt_text), "echo: every choice starts with its prompt",
              body, choice["text"], f"{prompt_text!r}...")
        if body.get("logprobs") is None:
            check(choice["logprobs"] is None, "echo without logprobs: logprobs null", body,
                  choice["logprobs"], None)
            continue
        check_completion_logprobs(body, choice, body["logprobs"], greedy=False, first_null=True)
        if "token_ids" in choice:
            count = prompt_count(port, prompt)
            check(len(choice["logprobs"]["tokens"]) == count + len(choice["token_ids"]),
                  "echo + logprobs: every choice carries its prompt's entries", body,
                  {"index": choice["index"], "tokens": choice["logprobs"]["tokens"]},
                  f"{count} prompt + {len(choice['token_ids'])} generated entries")


def check_repeatable(port, body, count, what):
    """The answer to `body` (`count` choices; seeded, greedy or beam search): the same twice, its
    usage counting each prompt once and every generated token."""
    first = complete(port, body)
    check_indices(body, first, count)
    second = complete(port, body)
    check(texts(first) == texts(second), f"{what}: the same choices twice", body, texts(second),
          texts(first))
    prompts = prompt_list(body["prompt"])
    check_usage(body, first["usage"], prompt_tokens=sum(prompt_count(port, p) for p in prompts),
                completion_tokens=sum(len(c["token_ids"]) for c in first["choices"])
                if body.get("return_token_ids") else None)
    return first


def check_choices(port):
    prompt = "And God said"
    # n: forked choices, choice i sampled with seed + i (README).
    body = {"prompt": prompt, "n": 3, "max_tokens": 5, "temperature": 1.0, "seed": 7,
            "logprobs": 1, "return_token_ids": True}
    try:
        first = check_repeatable(port, body, 3, "n with a seed")
        for choice in first["choices"]:
            check_completion_logprobs(body, choice, 1, greedy=False)
        check_stream_equals(port, body, first)
        for i in range(3):
            single = complete(port, dict(body, n=1, seed=7 + i))
            check(texts(single) == texts(first)[i:i + 1],
                  "n: choice i is sampled with seed + i (README)", dict(body, n=1, seed=7 + i),
                  texts(single), f"choice {i} of n=3 seed 7: {texts(first)[i]!r}")
        echo_body = dict(body, echo=True, max_tokens=3)
        echoed = complete(port, echo_body)
        check_echoed_choices(port, echo_body, echoed)
        check_stream_equals(port, echo_body, echoed)
    except ApiError:
        pass

    # best_of: the n best of best_of forked choices (seed + i each), best (mean logprob) first.
    body = {"prompt": prompt, "n": 2, "best_of": 4, "max_tokens": 5, "temperature": 1.0,
            "seed": 11, "logprobs": 0, "return_token_ids": True}
    try:
        first = check_repeatable(port, body, 2, "best_of with a seed")
        means = [sum(c["logprobs"]["token_logprobs"]) / len(c["logprobs"]["token_logprobs"])
                 for c in sorted(first["choices"], key=lambda c: c["index"])]
        check(means == sorted(means, reverse=True), "best_of: best (mean logprob) first", body,
              means, "descending")
        candidates = complete(port, {k: v for k, v in dict(body, n=4).items() if k != "best_of"})
        check(set(texts(first)) <= set(texts(candidates)),
              "best_of: the kept choices are among the n=best_of choices of the same seed", body,
              texts(first), f"a subset of {texts(candidates)}")
        for echo_body in ({k: v for k, v in body.items() if k != "logprobs"} | {"echo": True},
                          dict(body, echo=True, logprobs=1)):
            echoed = complete(port, echo_body)
            check_indices(echo_body, echoed, 2)
            check_echoed_choices(port, echo_body, echoed)
    except ApiError:
        pass

    # Beam search: n hypotheses of a beam of best_of, deterministic.
    body = {"prompt": prompt, "use_beam_search": True, "best_of": 3, "n": 2, "max_tokens": 5,
            "return_token_ids": True}
    try:
        first = check_repeatable(port, body, 2, "beam search")
        for choice in first["choices"]:
            if choice["finish_reason"] == "length":
                check(len(choice["token_ids"]) == 5, "beam: a length hypothesis has max_tokens",
                      body, choice, "5 token_ids")
        check_stream_equals(port, body, first)
        echo_body = dict(body, echo=True)
        echoed = complete(port, echo_body)
        check([prompt + t for t in texts(first)] == texts(echoed),
              "beam search + echo: prompt + each hypothesis", echo_body, texts(echoed),
              [prompt + t for t in texts(first)])
    except ApiError:
        pass

    # A batch of prompts: prompt p's choice j is choice p*n + j, as that prompt alone.
    prompts = ["And God said", "In the beginning"]
    body = {"prompt": prompts, "n": 2, "max_tokens": 4, "temperature": 1.0, "seed": 5,
            "logprobs": 0, "return_token_ids": True}
    try:
        batch = check_repeatable(port, body, 4, "prompt batch with a seed")
        for p, single_prompt in enumerate(prompts):
            single = complete(port, dict(body, prompt=single_prompt))
            check(texts(batch)[2 * p:2 * p + 2] == texts(single),
                  "prompt batch: prompt p's choices = that prompt alone", body,
                  texts(batch)[2 * p:2 * p + 2], texts(single))
        check_stream_equals(port, body, batch)
        echo_body = dict(body, echo=True, logprobs=1)
        echoed = complete(port, echo_body)
        check_echoed_choices(port, echo_body, echoed)
        check_stream_equals(port, echo_body, echoed)
    except ApiError:
        pass

    # Batches mixed with best_of, beam search, echo and logprobs.
    for body, count in [
        ({"prompt": [[BOS], [BOS, 599]], "max_tokens": 2, "temperature": 0, "echo": True,
          "logprobs": 0, "n": 2, "return_token_ids": True}, 4),
        ({"prompt": ["And", "In"], "n": 1, "best_of": 2, "max_tokens": 3, "temperature": 1.0,
          "seed": 1, "echo": True, "logprobs": 1, "return_token_ids": True}, 2),
        ({"prompt": ["And", "In"], "n": 2, "best_of": 2, "use_beam_search": True,
          "max_tokens": 3, "return_token_ids": True}, 4),
    ]:
        try:
            answer = check_repeatable(port, body, count, "mixed batch")
            if body.get("echo"):
                check_echoed_choices(port, body, answer)
            if "best_of" not in body or body.get("use_beam_search"):
                check_stream_equals(port, body, answer)
        except ApiError:
            pass


def check_parameters(port):
    # JSON null is "not given" (what SDKs send for an unset optional parameter).
    body = {"prompt": "And", "max_tokens": None, "temperature": 0, "logprobs": None,
            "stop": None, "n": None, "seed": None}
    try:
        answer = complete(port, body)
        check(answer["usage"]["completion_tokens"] == 16 or
              answer["choices"][0]["finish_reason"] == "stop",
              "max_tokens null = the default 16 (README)", body, answer["usage"], "16 tokens")
        check(answer["choices"][0]["logprobs"] is None, "logprobs null: none", body,
              answer["choices"][0]["logprobs"], None)
    except ApiError:
        pass
    # A batch of one string is that string.
    try:
        one = complete(port, {"prompt": ["And"], "max_tokens": 3, "temperature": 0})
        plain = complete(port, {"prompt": "And", "max_tokens": 3, "temperature": 0})
        check(texts(one) == texts(plain) and one["usage"] == plain["usage"],
              "prompt [text] = prompt text", {"prompt": ["And"]}, one, texts(plain))
    except ApiError:
        pass
    # temperature 0 with n > 1: every choice is the greedy text.
    body = {"prompt": "And God said", "n": 3, "max_tokens": 4, "temperature": 0}
    try:
        answer = complete(port, body)
        check(len(set(texts(answer))) == 1, "temperature 0: n choices identical", body,
              texts(answer), "one text")
    except ApiError:
        pass
    # logit_bias forces a token; logprobs stay the model's own (README).
    body = {"prompt": "And", "max_tokens": 3, "temperature": 0, "logprobs": 2,
            "logit_bias": {"280": 100}, "return_token_ids": True}
    try:
        choice = complete(port, body)["choices"][0]
        check(choice["token_ids"] == [280, 280, 280], "logit_bias +100 forces the token", body,
              choice["token_ids"], [280, 280, 280])
        check_completion_logprobs(body, choice, 2, greedy=False)
        check(all(v < -1.0 for v in choice["logprobs"]["token_logprobs"]),
              "logit_bias: logprobs are the model's own, not the biased ones", body,
              choice["logprobs"]["token_logprobs"], "the model's (low) logprobs")
    except ApiError:
        pass


def check_prefix_cache(port):
    """A prompt longer than a --prefix-block (64 tokens) answers the same from the cache (README:
    bitwise), and echo + logprobs still scores every prompt token."""
    long_prompt = ("And God said, Let there be light: and there was light. And God saw the "
                   "light, that it was good: and God divided the light from the darkness. And "
                   "God called the light Day, and the darkness he called Night. And the evening "
                   "and the morning were the first day. And God said, Let there be a firmament "
                   "in the midst of the waters")
    count = prompt_count(port, long_prompt)
    body = {"prompt": long_prompt, "max_tokens": 5, "temperature": 0, "logprobs": 1}
    miss = complete(port, body)
    hit = complete(port, body)
    check_same_choice("prefix cache hit vs miss", body, hit["choices"][0], miss["choices"][0],
                      SAME)
    echo_body = dict(body, echo=True)
    logprobs = complete(port, echo_body)["choices"][0]["logprobs"]
    check(len(logprobs["tokens"]) == count + 5 and
          all(v is not None for v in logprobs["token_logprobs"][1:]),
          "echo of a cached prompt: every prompt token scored (first null)", echo_body,
          {"entries": len(logprobs["tokens"]), "nulls": logprobs["token_logprobs"].count(None)},
          f"{count + 5} entries, 1 null")


def check_chat_content(sent, choice):
    """A chat choice's logprobs.content against its content: a stop (the template's) cuts the
    content inside the token that completes it, kept whole; byte tokens are checked by bytes."""
    content = choice["message"]["content"]
    entries = (choice.get("logprobs") or {}).get("content") or []
    spelled = bytes(b for e in entries for b in e["bytes"]).decode("utf-8", "replace")
    if choice["finish_reason"] == "stop":
        before = bytes(b for e in entries[:-1] for b in e["bytes"]).decode("utf-8", "replace")
        check(content.startswith(before) and spelled.startswith(content),
              "chat: the entries before the last spell a prefix of the content, all of them "
              "start with it", sent, {"entries": [e["token"] for e in entries]}, content)
    else:
        check(spelled == content, "chat: logprobs.content bytes spell the content", sent,
              {"entries": [e["token"] for e in entries]}, content)
    for entry in entries:
        if BYTE_TOKEN not in entry["token"]:
            check(bytes(entry["bytes"]).decode("utf-8", "replace") == entry["token"],
                  "chat: bytes decode to the token", sent, entry, entry["token"])
    return entries


def check_chat(port):
    messages = [{"role": "user", "content": "Who made the light?"}]
    body = {"messages": messages, "max_tokens": 8, "temperature": 0, "logprobs": True,
            "top_logprobs": 2, "return_token_ids": True}
    answer = chat(port, body)
    choice = answer["choices"][0]
    entries = check_chat_content(body, choice)
    for entry in entries:
        check(len(entry["top_logprobs"]) == 2, "chat: len(top_logprobs) = top_logprobs", body,
              entry, "2 alternatives")
        check(entry["logprob"] >= max(t["logprob"] for t in entry["top_logprobs"]) - 1e-6,
              "chat temperature 0: the chosen token is the most likely", body, entry,
              "logprob = max")
    check("\nuser:" not in choice["message"]["content"],
          "chat: the template's stop never in the content", body, choice["message"]["content"],
          "no '\\nuser:'")
    chat_prompt_tokens = post(port, "/tokenize", {"messages": messages})["count"]
    check_usage(body, answer["usage"], prompt_tokens=chat_prompt_tokens,
                completion_tokens=len(choice.get("token_ids", entries)))
    if choice["finish_reason"] == "length":
        check(answer["usage"]["completion_tokens"] == 8,
              "chat finish_reason length: completion_tokens = max_tokens", body, answer["usage"],
              "8")
    # n > 1 with a seed as well: whole, then streamed with include_usage (a role chunk per
    # choice first, then deltas that add up to the whole answer, one finish_reason each).
    n_body = {"messages": messages, "n": 2, "max_tokens": 6, "temperature": 1.0, "seed": 3,
              "logprobs": True, "top_logprobs": 0}
    n_answer = chat(port, n_body)
    check_indices(n_body, n_answer, 2)
    check(n_answer["usage"]["prompt_tokens"] == chat_prompt_tokens,
          "chat n=2: prompt counted once", n_body, n_answer["usage"],
          f"prompt_tokens {chat_prompt_tokens}")
    for c in n_answer["choices"]:
        n_entries = check_chat_content(n_body, c)
        check(all(e["top_logprobs"] == [] for e in n_entries),
              "chat top_logprobs 0: empty top_logprobs", n_body, n_entries[:1], "[]")
    for sent, whole in ((body, answer), (n_body, n_answer)):
        streamed_body = dict(sent, stream=True, stream_options={"include_usage": True})
        chunks = stream(port, "/v1/chat/completions", streamed_body)
        roles, contents, tokens, reasons = [], {}, {}, {}
        for chunk in chunks[:-1]:
            for c in chunk["choices"]:
                i = c["index"]
                delta = c.get("delta", {})
                if delta.get("role"):
                    check(i not in contents, "chat stream: a choice's role chunk comes first",
                          streamed_body, chunk, '{"delta": {"role": "assistant"}} first')
                    roles.append((i, delta["role"]))
                contents[i] = contents.get(i, "") + (delta.get("content") or "")
                tokens[i] = tokens.get(i, []) + [
                    e["token"] for e in (c.get("logprobs") or {}).get("content") or []]
                if c.get("finish_reason") is not None:
                    reasons.setdefault(i, []).append(c["finish_reason"])
        whole_choices = {c["index"]: c for c in whole["choices"]}
        check(sorted(roles) == [(i, "assistant") for i in sorted(whole_choices)],
              "chat stream: one role chunk (assistant) per choice", streamed_body, roles,
              "one per choice")
        check(contents == {i: c["message"]["content"] for i, c in whole_choices.items()},
              "chat stream: deltas add up to the whole content", streamed_body, contents,
              {i: c["message"]["content"] for i, c in whole_choices.items()})
        whole_tokens = {i: [e["token"] for e in c["logprobs"]["content"]]
                        for i, c in whole_choices.items()}
        check(tokens == whole_tokens, "chat stream: the same logprob tokens", streamed_body,
              tokens, whole_tokens)
        whole_reasons = {i: [c["finish_reason"]] for i, c in whole_choices.items()}
        check(reasons == whole_reasons, "chat stream: one finish_reason per choice, the whole's",
              streamed_body, reasons, whole_reasons)
        check(chunks[-1].get("usage") == whole["usage"], "chat stream: usage = whole answer's",
              streamed_body, chunks[-1].get("usage"), whole["usage"])


if __name__ == "__main__":
    sys.exit(run("models/trained/kjv-abc-m32",
                 [check_refusals, check_tokenize, check_prompts, check_stops, check_max_tokens,
                  check_choices, check_parameters, check_prefix_cache, check_chat]))
