"""Invariants of the gRPC API and its request-state features that a production client relies
on, checked against real servers on loopback: streamed vs whole answers, finish reasons and
counts, n > 1 with seeds, beam search, prompt logprobs against HTTP echo scoring, sessions
(continuation = the whole conversation, refusals, expiry), slots returned after every kind of
ending, export / import / transfer between servers and through redis-server, corrupted state
blobs, prefix states, a KV-cache model's sessions, and an encoder-decoder model over gRPC.

Deterministic (temperature 0, or fixed seeds). Each violated invariant is printed on one line
(what, sent, got, expected) and the script exits 1; it exits 0 printing the number of checks.

    grpc_state_invariants_test.py [SERVER [MODELS_DIR]]
"""

import os
import sys
import time

from grpc_invariant_checks import (GENESIS, GREEDY, ROOT, Redis, Server, check, check_redis,
                                   check_seq2seq, check_softmax, check_ttl, close,
                                   continue_reference, error_of, expect_refusal,
                                   hypothesis_score, report_and_exit, stream_ids,
                                   stream_text, streamed)

PROMPTS = [GENESIS, "And God said", "Jesús dijo “paz” ñ à la mañana", "LORD, LORD!"]
LONG = ("And the LORD spake unto Moses, saying, Speak unto the children of Israel, and say unto "
        "them, When any man of you bring an offering unto the LORD, ye shall bring your offering "
        "of the cattle, even of the herd, and of the flock. If his offering be a burnt sacrifice "
        "of the herd, let him offer a male without blemish: he shall offer it of his own "
        "voluntary will at the door of the tabernacle of the congregation before the LORD.")


def check_stream_vs_complete(s):
    c = s.client
    for prompt in PROMPTS + [[1, 266, 260, 280]]:
        opts = dict(max_new_tokens=24, **GREEDY)
        chunks, fin = streamed(c, prompt, **opts)
        whole = c.complete(prompt, **opts)
        ids, text = stream_ids(chunks), stream_text(chunks)
        sent = {"prompt": prompt, **opts}
        check(ids == whole.token_ids and text == whole.text,
              "Generate's chunks concatenate to Complete's ids and text", sent,
              {"stream": (ids, text), "complete": (whole.token_ids, whole.text)}, "equal")
        check(len(fin) == 1 and fin[0].generated_tokens == len(ids) == 24
              and fin[0].finish_reason == "length",
              "Finished counts the streamed tokens; max_new_tokens ends with length", sent,
              (fin, len(ids)), "one finished, generated_tokens == len(ids) == 24, length")
        expected_prompt = len(prompt) if isinstance(prompt, list) else len(
            s.tokenize(prompt, True))
        check(fin[0].prompt_tokens == expected_prompt == whole.finished.prompt_tokens,
              "Finished.prompt_tokens = tokenized prompt with BOS (ids as sent)", sent,
              (fin[0].prompt_tokens, whole.finished.prompt_tokens), expected_prompt)
        # The text is what the ids spell: decoding (prompt ids + generated ids) extends the
        # decoding of the prompt ids by exactly the streamed text.
        prompt_ids = prompt if isinstance(prompt, list) else s.tokenize(prompt, True)
        base, full = s.detokenize(prompt_ids), s.detokenize(prompt_ids + ids)
        check(full == base + text, "streamed text = detokenize(prompt + ids) - detokenize(prompt)",
              sent, {"text": text, "detok": full[len(base):] if full.startswith(base) else full},
              "equal")
        check(all(isinstance(ch.text, str) for ch in chunks) and "\ufffd" not in text,
              "no chunk splits a UTF-8 character (no U+FFFD)", sent, text, "no U+FFFD")


def check_finish_reasons(s):
    c, eos = s.client, s.info.eos_id
    base = c.complete("And God said", max_new_tokens=20, **GREEDY)
    ids = base.token_ids
    # Forced eos: the eos id comes back as the only token, reason eos, no text.
    chunks, fin = streamed(c, "And God said", max_new_tokens=5, logit_bias={eos: 100}, **GREEDY)
    check(stream_ids(chunks) == [eos] and fin[0].finish_reason == "eos"
          and fin[0].generated_tokens == 1 and stream_text(chunks) == "",
          "eos ends with reason eos, one token, no text", {"logit_bias": {eos: 100}},
          (stream_ids(chunks), stream_text(chunks), fin[0].finish_reason), "([eos], '', eos)")
    # ignore_eos keeps going past it.
    chunks, fin = streamed(c, "And God said", max_new_tokens=3, logit_bias={eos: 100},
                           ignore_eos=True, **GREEDY)
    check(fin[0].finish_reason == "length" and len(stream_ids(chunks)) == 3,
          "ignore_eos generates past eos up to max_new_tokens",
          {"logit_bias": {eos: 100}, "ignore_eos": True}, (stream_ids(chunks), fin), "3, length")
    # min_new_tokens holds eos back.
    chunks, fin = streamed(c, "And God said", max_new_tokens=6, min_new_tokens=3,
                           logit_bias={eos: 100}, **GREEDY)
    got = stream_ids(chunks)
    check(len(got) == 4 and got[-1] == eos and eos not in got[:3] and fin[0].finish_reason == "eos",
          "min_new_tokens=3 holds eos back until 3 tokens were generated",
          {"min_new_tokens": 3, "logit_bias": {eos: 100}}, got, "3 non-eos ids then eos")
    # A stop token id: the output is the greedy one up to and including its first occurrence.
    stop_id = ids[6]
    chunks, fin = streamed(c, "And God said", max_new_tokens=20, stop_token_ids=[stop_id], **GREEDY)
    want = ids[:ids.index(stop_id) + 1]
    check(stream_ids(chunks) == want and fin[0].finish_reason == "eos"
          and fin[0].generated_tokens == len(want),
          "stop_token_ids: greedy ids up to and including the stop id, reason eos",
          {"stop_token_ids": [stop_id]}, (stream_ids(chunks), fin[0].finish_reason), want)
    # A stop sequence inside the greedy text: the text ends just before it.
    for stop in [" LORD", "hath", ", What"]:
        if stop not in base.text:
            continue
        opts = dict(max_new_tokens=20, stop=stop, **GREEDY)
        chunks, fin = streamed(c, "And God said", **opts)
        whole = c.complete("And God said", **opts)
        want = base.text[:base.text.index(stop)]
        check(stream_text(chunks) == want == whole.text and fin[0].finish_reason == "stop_sequence"
              and whole.finished.finish_reason == "stop_sequence",
              "stop sequence: text ends before its first occurrence (stream and Complete)", opts,
              (stream_text(chunks), whole.text, fin[0].finish_reason), want)
        n = len(stream_ids(chunks))
        check(stream_ids(chunks) == ids[:n] == whole.token_ids and fin[0].generated_tokens == n,
              "stop sequence: ids are the greedy prefix, generated_tokens counts them", opts,
              (stream_ids(chunks), whole.token_ids, fin[0].generated_tokens), ids[:n])


def check_n_choices(s):
    c = s.client
    opts = dict(max_new_tokens=12, temperature=1.0, seed=1234)
    chunks, fins = streamed(c, GENESIS, n=3, **opts)
    for i in range(3):
        single = c.complete(GENESIS, **{**opts, "seed": 1234 + i})
        fin = [f for f in fins if f.choice_index == i]
        check(stream_ids(chunks, i) == single.token_ids and stream_text(chunks, i) == single.text,
              f"n=3 choice {i} equals a single request with seed + {i}", {"n": 3, **opts},
              (stream_ids(chunks, i), stream_text(chunks, i)), (single.token_ids, single.text))
        check(len(fin) == 1 and fin[0].seed == 1234 + i
              and fin[0].generated_tokens == len(stream_ids(chunks, i)),
              f"n=3 choice {i} has one Finished with seed + {i} and its token count",
              {"n": 3, **opts}, fin, f"seed {1234 + i}")
    expect_refusal("Complete refuses n > 1", {"n": 2},
                   lambda: c.complete(GENESIS, n=2, max_new_tokens=2), "InvalidArgumentError", "n")
    expect_refusal("keep_session refused with n > 1", {"n": 2, "keep": True},
                   lambda: streamed(c, GENESIS, n=2, keep_session=True, max_new_tokens=2),
                   "InvalidArgumentError")
    s.wait_slots_free("n > 1", {"n": 3})


def check_seeds(s):
    """A reported seed replays the request; unseeded choices report seed + choice_index."""
    c = s.client
    first = c.complete(GENESIS, max_new_tokens=10, temperature=1.0)
    again = c.complete(GENESIS, max_new_tokens=10, temperature=1.0, seed=first.finished.seed)
    check(again.token_ids == first.token_ids, "replaying Finished.seed gives the same tokens",
          {"seed": first.finished.seed}, again.token_ids, first.token_ids)
    stream = c.generate(GENESIS, n=3, max_new_tokens=6, temperature=1.0)
    chunks = list(stream)
    seeds = {f.choice_index: f.seed for f in stream.finished_choices}
    base = seeds.get(0, 0)
    check(sorted(seeds) == [0, 1, 2] and all(seeds[i] == (base + i) % 2**64 for i in seeds),
          "unseeded n=3: choice i reports the picked seed + i", {"n": 3}, seeds, "seed0 + i")
    replay = c.complete(GENESIS, max_new_tokens=6, temperature=1.0, seed=seeds.get(2, 0))
    check(replay.token_ids == stream_ids(chunks, 2), "choice 2 replays with its reported seed",
          {"seed": seeds.get(2)}, replay.token_ids, stream_ids(chunks, 2))


def check_beam(s):
    c = s.client
    for penalty in [0.0, 1.0]:
        opts = dict(beam_width=4, n_best=3, length_penalty=penalty, max_new_tokens=16)
        chunks, fins = streamed(c, "And God said", **opts)
        again = c.complete("And God said", **opts)
        hyps = fins[0].hypotheses if fins else []
        check(len(hyps) == 3 and [h.token_ids for h in hyps]
              == [h.token_ids for h in again.finished.hypotheses],
              "beam search is deterministic (Generate = Complete, 3 hypotheses)", opts,
              [h.token_ids for h in hyps], [h.token_ids for h in again.finished.hypotheses])
        if not hyps:
            continue
        check(all(a.score >= b.score for a, b in zip(hyps, hyps[1:])),
              "n_best is ordered by score, best first", opts, [h.score for h in hyps],
              "non-increasing")
        for h in hyps:
            want = hypothesis_score(h.logprob_sum, len(h.token_ids), penalty)
            check(close(h.score, want, 1e-6), "score = logprob_sum / len^length_penalty", opts,
                  (h.score, h.logprob_sum, len(h.token_ids)), want)
            # The logprob sum is what the model gives those tokens after the prompt.
            prompt_ids = s.tokenize("And God said", True)
            scored = c.complete(prompt_ids + h.token_ids, max_new_tokens=1, logprobs=0,
                                prompt_logprobs=True, **GREEDY)
            total = sum(p.logprob for p in scored.prompt_logprobs[len(prompt_ids) - 1:])
            check(close(total, h.logprob_sum, 1e-3), "hypothesis logprob_sum = prompt-scored sum",
                  {"ids": h.token_ids}, total, h.logprob_sum)
        check(stream_ids(chunks) == hyps[0].token_ids and stream_text(chunks) == hyps[0].text
              and again.text == hyps[0].text and fins[0].generated_tokens == len(hyps[0].token_ids),
              "beam streams the best hypothesis; Complete's text is the best one's", opts,
              (stream_ids(chunks), again.text), (hyps[0].token_ids, hyps[0].text))
    greedy = c.complete("And God said", max_new_tokens=10, **GREEDY)
    one = c.complete("And God said", max_new_tokens=10, beam_width=1, **GREEDY)
    check(one.token_ids == greedy.token_ids, "beam width 1 with temperature 0 is greedy",
          {"beam_width": 1, "temperature": 0}, one.token_ids, greedy.token_ids)
    # The proto: "width 1 is greedy decoding" (and for beams "an unset temperature means 0").
    unset = [c.complete("And God said", max_new_tokens=10, beam_width=1).token_ids
             for _ in range(2)]
    check(unset == [greedy.token_ids] * 2,
          "proto BeamOptions: beam.width 1 (temperature unset) is greedy decoding",
          {"beam": {"width": 1}, "max_new_tokens": 10}, unset, greedy.token_ids)
    for bad, needle in [(dict(temperature=0.5), "temperature"), (dict(seed=3), "seed"),
                        (dict(stop="x"), "stop"), (dict(keep_session=True), "session"),
                        (dict(n_best=5), "n_best"), (dict(logprobs=0), "logprobs")]:
        expect_refusal(f"beam refuses {list(bad)}", {"beam_width": 4, **bad},
                       lambda: c.complete("And", beam_width=4, max_new_tokens=3, **bad),
                       "InvalidArgumentError", needle)
    s.wait_slots_free("beam search", {"beam_width": 4})


def check_prompt_logprobs(s):
    c = s.client
    for prompt in [GENESIS, LONG]:
        ids = s.tokenize(prompt, True)
        whole = c.complete(prompt, max_new_tokens=1, logprobs=2, prompt_logprobs=True, **GREEDY)
        chunks, _ = streamed(c, prompt, max_new_tokens=1, logprobs=2, prompt_logprobs=True,
                             **GREEDY)
        got = [p.id for p in whole.prompt_logprobs]
        check(got == ids[1:], "prompt_logprobs score prompt tokens 1..size-1", {"prompt": prompt},
              got, ids[1:])
        grpc_sum = sum(p.logprob for p in whole.prompt_logprobs)
        stream_sum = sum(p.logprob for p in chunks[0].prompt_logprobs)
        status, body = s.http("/v1/completions", {"prompt": prompt, "max_tokens": 1, "echo": True,
                                                  "logprobs": 0, "temperature": 0})
        http_lp = body["choices"][0]["logprobs"]["token_logprobs"] if status == 200 else []
        http_sum = sum(x for x in http_lp[1:len(ids)] if x is not None)
        check(status == 200 and close(grpc_sum, http_sum, 1e-5) and close(grpc_sum, stream_sum, 1e-6),
              "gRPC prompt logprob sum = HTTP echo sum = streamed sum", {"prompt": prompt[:40]},
              (grpc_sum, stream_sum, http_sum), "equal")
        gen = whole.logprobs[0] if whole.logprobs else None
        check(gen is not None and gen.id == whole.token_ids[0] and gen.top and gen.top[0][0] == gen.id
              and close(gen.top[0][1], gen.logprob, 1e-6),
              "greedy token's logprob is its top alternative's", {"prompt": prompt[:40]}, gen,
              "top[0] == (id, logprob)")


def check_prefix_cache(s, fresh):
    c = s.client
    prompt = LONG + " And the LORD said"
    opts = dict(max_new_tokens=12, logprobs=1, **GREEDY)
    a, b = c.complete(prompt, **opts), c.complete(prompt, **opts)
    other = c.complete(LONG + " But Moses", **opts)  # shares the cached blocks
    ref = fresh.client.complete(prompt, **opts)
    ref_other = fresh.client.complete(LONG + " But Moses", **opts)
    lp = lambda r: [(t.id, t.logprob) for t in r.logprobs]
    check(lp(a) == lp(b) == lp(ref), "prefix state hit = miss = --prefix-block 0 (ids, logprobs)",
          {"prompt": prompt[-40:], **opts}, (lp(b)[:3], lp(ref)[:3]), "bitwise equal")
    check(lp(other) == lp(ref_other), "a different suffix on cached blocks = no cache",
          {"prompt": "LONG + ' But Moses'"}, (lp(other)[:3], lp(ref_other)[:3]), "bitwise equal")
    # A prompt of exactly two blocks (128 ids): the hit still prefills one token itself.
    ids = (s.tokenize(LONG, True) * 3)[:2 * s.info.prefix_block]
    x, y = c.complete(ids, **opts), c.complete(ids, **opts)
    z = fresh.client.complete(ids, **opts)
    check(lp(x) == lp(y) == lp(z), "prefix state hit on a block-aligned prompt = miss",
          {"prompt ids": len(ids)}, (lp(y)[:2], lp(z)[:2]), "bitwise equal")
    # A kept session whose prompt came from the prefix cache continues as the whole text.
    kept = c.complete(prompt, keep_session=True, **GREEDY, max_new_tokens=6)
    more = c.complete(" And", session=kept.finished.session_handle, max_new_tokens=8, **GREEDY)
    want, _ = continue_reference(s, prompt, kept, " And", max_new_tokens=8, **GREEDY)
    check(more.token_ids == want.token_ids, "session kept from a prefix-cache hit continues alike",
          {"prompt": "LONG...", "then": " And"}, more.token_ids, want.token_ids)
    check(b.finished.prompt_tokens == a.finished.prompt_tokens == len(s.tokenize(prompt, True)),
          "prompt_tokens counts cached tokens too", {"prompt": "LONG"},
          (a.finished.prompt_tokens, b.finished.prompt_tokens), len(s.tokenize(prompt, True)))


def check_sessions(s):
    c = s.client
    opts = dict(max_new_tokens=10, **GREEDY)
    first = c.complete("And God said", keep_session=True, **opts)
    handle = first.finished.session_handle
    check(handle.startswith("ss-") and len(handle) == 35, "keep returns an ss- handle",
          {"keep": True}, handle, "ss- + 32 hex digits")
    for second in [" and the LORD", [266, 260]]:
        want, pending_plus = continue_reference(s, "And God said", first, second, **opts)
        got = c.complete(second, session=handle, **opts)
        check(got.token_ids == want.token_ids and got.text == want.text,
              "session continuation = one request over the whole conversation (greedy)",
              {"session": "A", "prompt": second}, got.token_ids, want.token_ids)
        check(got.finished.prompt_tokens == pending_plus,
              "continuation prompt_tokens = pending token + new prompt", {"prompt": second},
              got.finished.prompt_tokens, pending_plus)
    # Without keep the session is unchanged: the same continuation again gives the same.
    again = c.complete(" and the LORD", session=handle, **opts)
    want, _ = continue_reference(s, "And God said", first, " and the LORD", **opts)
    check(again.token_ids == want.token_ids, "a continuation without keep leaves the session",
          {"session": handle}, again.token_ids, want.token_ids)
    # keep again: the same handle moves on; a third turn equals the whole conversation.
    second = c.complete(" and the LORD", session=handle, keep_session=True, **opts)
    check(second.finished.session_handle == handle, "keep on a continuation keeps the handle",
          {"session": handle, "keep": True}, second.finished.session_handle, handle)
    third = c.complete(" Then", session=handle, **opts)
    whole = (s.tokenize("And God said", True) + first.token_ids + s.tokenize(" and the LORD", False)
             + second.token_ids + s.tokenize(" Then", False))
    want = c.complete(whole, **opts)
    check(third.token_ids == want.token_ids, "three turns = the whole conversation",
          {"turns": 3}, third.token_ids, want.token_ids)
    # Streamed continuation equals the unary one.
    chunks, _ = streamed(c, " Then", session=handle, **opts)
    check(stream_ids(chunks) == third.token_ids, "streamed continuation = Complete continuation",
          {"session": handle}, stream_ids(chunks), third.token_ids)
    # Refusals at submission.
    expect_refusal("unknown session handle: NOT_FOUND", {"session": "ss-" + "0" * 32},
                   lambda: c.complete("x", session="ss-" + "0" * 32, max_new_tokens=2),
                   "NotFoundError", "ss-" + "0" * 32)
    for weird in ["", "ss-" + "0" * 31 + "g", "x" * 5000, "ss-ü"]:
        if weird:
            expect_refusal("a malformed session handle: NOT_FOUND", {"session": weird[:40]},
                           lambda: c.complete("x", session=weird, max_new_tokens=2),
                           "NotFoundError")
        expect_refusal("export of a malformed handle: NOT_FOUND", {"export": weird[:40]},
                       lambda: c.export_session(weird), "NotFoundError")
    # A session in use: a long continuation running while a second one arrives.
    stream = c.generate(" And", session=handle, max_new_tokens=3000, ignore_eos=True, **GREEDY)
    iterator = iter(stream)
    next(iterator)
    expect_refusal("a session in use by another request: FAILED_PRECONDITION",
                   {"session": handle, "concurrent": True},
                   lambda: c.complete(" x", session=handle, max_new_tokens=2),
                   "FailedPreconditionError", handle)
    stream.cancel()
    list(iterator)
    s.wait_slots_free("a cancelled continuation", {"session": handle})
    before = c.export_session(handle)
    stream = c.generate(" And", session=handle, keep_session=True, max_new_tokens=3000,
                        ignore_eos=True, **GREEDY)
    iterator = iter(stream)
    next(iterator)
    check(c.export_session(handle) == before, "export while a continuation runs: the kept state",
          {"session": handle}, "other bytes", "the bytes before it")
    stream.cancel()
    list(iterator)
    error_of(lambda: c.complete(" And", session=handle, keep_session=True, max_new_tokens=3000,
                                ignore_eos=True, timeout=0.15, **GREEDY))
    s.wait_slots_free("a cancelled keep continuation", {"session": handle, "keep": True})
    check(c.export_session(handle) == before,
          "a cancelled / timed-out continuation with keep leaves the session's bytes",
          {"session": handle, "keep": True}, "other bytes", "unchanged")
    after = c.complete(" Then", session=handle, **opts)
    check(after.token_ids == third.token_ids, "a cancelled continuation leaves the session as it was",
          {"session": handle}, after.token_ids, third.token_ids)
    # A deadline that passes mid-continuation also leaves it.
    name, message = error_of(lambda: c.complete(" And", session=handle, max_new_tokens=2000,
                                                ignore_eos=True, timeout=0.15, **GREEDY))
    check(name == "DeadlineExceededError", "a passed deadline: DEADLINE_EXCEEDED",
          {"timeout": 0.15, "max_new_tokens": 2000}, (name, message), "DeadlineExceededError")
    s.wait_slots_free("a deadline", {"timeout": 0.15})
    after = c.complete(" Then", session=handle, **opts)
    check(after.token_ids == third.token_ids, "a continuation past its deadline leaves the session",
          {"session": handle}, after.token_ids, third.token_ids)
    for bad, cls in [(dict(session=handle, source="Hola"), "InvalidArgumentError"),
                     (dict(session=handle, beam_width=2), "InvalidArgumentError")]:
        expect_refusal(f"refused beside a session: {[k for k in bad if k != 'session']}",
                       bad, lambda: c.complete(" x", max_new_tokens=2, **bad), cls)
    s.wait_slots_free("sessions", {"sessions": True})
    return handle, third


def check_session_endings(s):
    """A kept session after each kind of ending continues as the whole conversation does."""
    c, eos = s.client, s.info.eos_id
    opts = dict(max_new_tokens=10, **GREEDY)
    for what, extra in [("a stop sequence", {"stop": " LORD"}), ("eos", {"logit_bias": {eos: 100}}),
                        ("a stop token id", {"stop_token_ids": [259]}),
                        ("ids prompt", {})]:
        prompt = [1, 266, 1403] if what == "ids prompt" else "And God said"
        first = c.complete(prompt, keep_session=True, **{**opts, **extra})
        handle = first.finished.session_handle
        if not check(handle, f"keep after {what} returns a handle", extra, first.finished, "handle"):
            continue
        want, count = continue_reference(s, prompt, first, " and", **opts)
        got = c.complete(" and", session=handle, **opts)
        check(got.token_ids == want.token_ids and got.finished.prompt_tokens == count,
              f"session kept after {what}: continuation = whole conversation (ids returned)",
              {"first": extra, "then": " and"}, (got.token_ids, got.finished.prompt_tokens),
              (want.token_ids, count))
        # n > 1 on a continuation: choice i = the continuation with seed + i.
        sampled = dict(max_new_tokens=6, temperature=1.0, seed=40)
        chunks, _ = streamed(c, " and", session=handle, n=2, **sampled)
        for i in range(2):
            one = c.complete(" and", session=handle, **{**sampled, "seed": 40 + i})
            check(stream_ids(chunks, i) == one.token_ids,
                  f"n=2 on a session: choice {i} = the continuation with seed + {i}",
                  {"session": handle, "n": 2}, stream_ids(chunks, i), one.token_ids)
    expect_refusal("prompt logprobs beside a session handle refused", {"prompt_logprobs": True},
                   lambda: c.complete(" x", session=handle, logprobs=0, prompt_logprobs=True,
                                      max_new_tokens=2), "InvalidArgumentError", "prompt")
    # n > 1 with prompt logprobs: in choice 0's first event only, the same as a single request.
    chunks, _ = streamed(c, GENESIS, n=3, temperature=1.0, seed=3, max_new_tokens=4, logprobs=0,
                         prompt_logprobs=True)
    single = c.complete(GENESIS, max_new_tokens=1, logprobs=0, prompt_logprobs=True, **GREEDY)
    carrying = [(k, ch.choice_index) for k, ch in enumerate(chunks) if ch.prompt_logprobs]
    first0 = next(k for k, ch in enumerate(chunks) if ch.choice_index == 0)
    check(carrying == [(first0, 0)] and [(p.id, p.logprob) for p in chunks[first0].prompt_logprobs]
          == [(p.id, p.logprob) for p in single.prompt_logprobs],
          "n=3: prompt logprobs once, in choice 0's first event, = a single request's",
          {"n": 3, "prompt_logprobs": True}, carrying, [(first0, 0)])
    s.wait_slots_free("session endings", {})


def check_slot_returns(s):
    c = s.client
    # Client cancel of a stream, of n > 1, of a beam; a deadline; a refused request.
    for what, opts in [("cancel", {}), ("cancel n=3", {"n": 3, "temperature": 1.0, "seed": 5}),
                       ("cancel beam", {"beam_width": 3})]:
        stream = c.generate(GENESIS, max_new_tokens=3000, ignore_eos=True, **opts)
        it = iter(stream)
        if "beam" not in what:
            next(it)
        else:
            time.sleep(0.2)
        stream.cancel()
        list(it)
        s.wait_slots_free(what, opts)
    for opts in [{}, {"n": 4, "temperature": 1.0, "seed": 9}, {"beam_width": 4},
                 {"keep_session": True}]:
        call = (lambda o=opts: streamed(c, GENESIS, max_new_tokens=3000, ignore_eos=True,
                                        timeout=0.2, **o)) if "n" in opts else \
               (lambda o=opts: c.complete(GENESIS, max_new_tokens=3000, ignore_eos=True,
                                          timeout=0.2, **o))
        name, message = error_of(call)
        check(name == "DeadlineExceededError", "deadline mid-generation: DEADLINE_EXCEEDED",
              {"timeout": 0.2, **opts}, (name, short_msg(message)), "DeadlineExceededError")
        s.wait_slots_free("a deadline", opts)
    # Many cancelled streams at once (the client closes every one after its first token).
    streams = [c.generate(GENESIS, max_new_tokens=3000, ignore_eos=True, temperature=1.0, seed=k)
               for k in range(6)]
    for st in streams:
        next(iter(st))
    for st in streams:
        st.cancel()
    s.wait_slots_free("6 concurrent cancels", {"streams": 6})


def short_msg(message):
    return str(message)[:120]


def check_export_import(s, other, signed, other_model, handle, third):
    c = s.client
    opts = dict(max_new_tokens=10, **GREEDY)
    blob = c.export_session(handle)
    check(blob[:8] == b"SLOTSTAT", "exported state starts with the SLOTSTAT magic",
          {"export": handle}, blob[:8], b"SLOTSTAT")
    for where, server in [("the same server", s), ("another server of the model", other)]:
        new = server.client.import_session(blob)
        got = server.client.complete(" Then", session=new, **opts)
        check(new != handle and got.token_ids == third.token_ids,
              f"import on {where}: continuation = the one without the round trip",
              {"import": len(blob)}, (new, got.token_ids), third.token_ids)
        # An imported session exports the same bytes again (nothing moved).
        check(server.client.export_session(new) == blob, f"export(import(blob)) = blob on {where}",
              {"handle": new}, "different bytes", "identical")
    bad = [("empty", b""), ("truncated by 1", blob[:-1]), ("truncated to half", blob[:len(blob) // 2]),
           ("magic damaged", b"X" + blob[1:]), ("trailing byte", blob + b"\0"),
           ("payload byte flipped", blob[:len(blob) // 2] + bytes([blob[len(blob) // 2] ^ 1])
            + blob[len(blob) // 2 + 1:]),
           ("version changed", blob[:8] + b"\x02" + blob[9:]),
           ("flags say signed", blob[:12] + b"\x01" + blob[13:])]
    # A blob re-checksummed after its pending token was set outside the vocabulary.
    import hashlib
    import struct
    kind_len = struct.unpack_from("<I", blob, 48)[0]
    pending_at = 52 + kind_len + 4 + 8
    forged = bytearray(blob[:-32])
    struct.pack_into("<i", forged, pending_at, s.info.vocab_size + 7)
    bad.append(("re-checksummed, pending token outside the vocabulary",
                bytes(forged) + hashlib.sha256(bytes(forged)).digest()))
    for what, data in bad:
        expect_refusal(f"import of a {what} blob: INVALID_ARGUMENT with the parser's message",
                       {"blob": what}, lambda: c.import_session(data), "InvalidArgumentError",
                       "state")
    expect_refusal("import of another model's blob refused", {"blob": "kjv-abc-m16's"},
                   lambda: c.import_session(other_model.client.export_session(
                       other_model.client.complete("And", keep_session=True, max_new_tokens=2)
                       .finished.session_handle)), "InvalidArgumentError", "fingerprint")
    signed_handle = signed.client.complete("And God said", keep_session=True, **opts)
    sblob = signed.client.export_session(signed_handle.finished.session_handle)
    expect_refusal("a signed blob on a server without the key refused", {"blob": "signed"},
                   lambda: c.import_session(sblob), "InvalidArgumentError", "sign")
    expect_refusal("an unsigned blob on a server with a key refused", {"blob": "unsigned"},
                   lambda: signed.client.import_session(blob), "InvalidArgumentError", "sign")
    flipped = sblob[:-1] + bytes([sblob[-1] ^ 1])
    expect_refusal("a blob whose HMAC does not verify refused", {"blob": "hmac flipped"},
                   lambda: signed.client.import_session(flipped), "InvalidArgumentError")
    got = signed.client.complete(" Then", session=signed.client.import_session(sblob), **opts)
    check(got.token_ids == signed.client.complete(
        " Then", session=signed_handle.finished.session_handle, **opts).token_ids,
          "signed round trip continues alike", {"signed": True}, got.token_ids, "same")
    expect_refusal("export of an unknown handle: NOT_FOUND", {"export": "ss-" + "f" * 32},
                   lambda: c.export_session("ss-" + "f" * 32), "NotFoundError")
    check(c.complete("And", max_new_tokens=3, **GREEDY).finished.generated_tokens == 3,
          "the server keeps serving after the bad imports", {"prompt": "And"}, "", "3 tokens")


def main():
    started = time.time()
    binary = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build/server/slotserve-server")
    models = sys.argv[2] if len(sys.argv) > 2 else str(ROOT / "models/trained")
    abc = models + "/kjv-abc-m32"
    import tempfile
    key = tempfile.NamedTemporaryFile("w", suffix=".key", delete=False)
    key.write("0123456789abcdef-test-key\n")
    key.close()
    servers = []
    try:
        s = Server(binary, abc, "--max-slots=8")
        servers.append(s)
        fresh = Server(binary, abc, "--max-slots=2", "--prefix-block=0")
        signed = Server(binary, abc, "--max-slots=2", f"--state-key-file={key.name}")
        other_model = Server(binary, models + "/kjv-abc-m16", "--max-slots=2")
        servers += [fresh, signed, other_model]
        check_stream_vs_complete(s)
        check_finish_reasons(s)
        check_n_choices(s)
        check_seeds(s)
        check_beam(s)
        check_prompt_logprobs(s)
        check_prefix_cache(s, fresh)
        handle, third = check_sessions(s)
        check_session_endings(s)
        check_slot_returns(s)
        check_export_import(s, fresh, signed, other_model, handle, third)
        s.wait_slots_free("everything on the main server", {})
        check_seq2seq(binary, models + "/es-en-abc-m32-long")
        check_ttl(binary, abc)
        check_softmax(binary, models)
        redis = Redis.start()
        if redis is None:
            # scripts/install-deps.sh installs redis-server: in CI its absence is a failure.
            check(os.environ.get("CI") != "true", "redis-server starts (CI=true)", "redis-server",
                  "not found or did not listen", "a redis-server on a loopback port")
            print("note: no redis-server; the shared session store is not checked")
        else:
            try:
                check_redis(binary, abc, redis)
            finally:
                redis.stop()
    finally:
        for server in servers:
            server.stop()
    report_and_exit(started)


if __name__ == "__main__":
    main()
