"""Keyword arguments -> slotserve.v1.GenerateRequest, and the server's messages -> the dataclasses
of results.py. Shared by the sync and asyncio clients. Only Python types are checked here; every
range is the server's to check (its INVALID_ARGUMENT names the field)."""

from slotserve import results
from slotserve._stubs import health_pb, pb

_FINISH_REASONS = {
    pb.FINISH_REASON_LENGTH: "length",
    pb.FINISH_REASON_EOS: "eos",
    pb.FINISH_REASON_STOP_SEQUENCE: "stop_sequence",
    pb.FINISH_REASON_CANCELLED: "cancelled",
}


def build_request(prompt, *, max_new_tokens=None, min_new_tokens=None, temperature=None,
                  top_k=None, top_p=None, min_p=None, repetition_penalty=None,
                  presence_penalty=None, frequency_penalty=None, seed=None, stop=None,
                  stop_token_ids=None, ignore_eos=False, logprobs=None, request_id="", n=None,
                  keep_session=False, session=None, beam_width=None, n_best=None,
                  length_penalty=None, source=None, prompt_logprobs=False,
                  logit_bias=None):
    """The request for `prompt` (text, or a list of token ids used as given). Unset options take
    the server's defaults. `logprobs`: None for none, N for each token's log probability and its
    N likeliest alternatives (0 for the token's alone). `stop`: a string or a list of them.
    `n`: choices of one prompt, prefilled once (choice i samples with seed + i). `session`: a
    handle to continue (only the new prompt is prefilled); `keep_session`: keep the final state
    (Finished.session_handle names it). `beam_width` > 1: beam search instead of sampling
    (deterministic: the server refuses sampling options beside it); the best hypothesis streams
    as one chunk at the end and Finished.hypotheses holds the `n_best` best, each with its
    `length_penalty`-ed score (score = logprob_sum / length ** length_penalty). `source`: for an encoder-decoder model
    (ModelInfo.is_seq2seq), the text or token ids to translate; `prompt` is then an optional
    target prefix (None or "" for none). `prompt_logprobs` (with `logprobs`): also score the
    prompt, each token after the first given those before it, or beside a `source` every
    token, the first given the decoder's start token (Chunk.prompt_logprobs of the first chunk,
    Completion.prompt_logprobs). `logit_bias`: {token id: bias in [-100, 100]}
    added to those tokens' logits before each token is chosen (-100 in effect bans a token,
    +100 forces it; logprobs stay the model's raw distribution)."""
    request = pb.GenerateRequest(request_id=request_id)
    if n is not None:
        request.n = n
    if keep_session:
        request.session.keep = True
    if beam_width is not None:
        request.beam.width = beam_width
    if n_best is not None:
        request.beam.n_best = n_best
    if length_penalty is not None:
        request.beam.length_penalty = length_penalty
    if session is not None:
        request.session.handle = session
    if source is not None:
        _set_text_or_ids(request.source, source, "source")
    if prompt is not None or source is None:  # beside a source the prompt may be left out
        _set_text_or_ids(request, prompt, "prompt")
    sampling = request.sampling
    for name, value in (("temperature", temperature), ("top_k", top_k), ("top_p", top_p),
                        ("min_p", min_p), ("repetition_penalty", repetition_penalty),
                        ("presence_penalty", presence_penalty),
                        ("frequency_penalty", frequency_penalty), ("seed", seed)):
        if value is not None:
            setattr(sampling, name, value)
    if logit_bias:
        for token_id, bias in logit_bias.items():
            sampling.logit_bias[int(token_id)] = float(bias)
    stopping = request.stopping
    if max_new_tokens is not None:
        stopping.max_new_tokens = max_new_tokens
    if min_new_tokens is not None:
        stopping.min_new_tokens = min_new_tokens
    if stop is not None:
        stops = [stop] if isinstance(stop, str) else list(stop)
        stopping.stop_sequences.extend(s.encode("utf-8") for s in stops)
    if stop_token_ids:
        stopping.stop_token_ids.extend(stop_token_ids)
    stopping.ignore_eos = ignore_eos
    if logprobs is not None:
        request.logprobs.enabled = True
        request.logprobs.top_n = logprobs
    request.logprobs.prompt = prompt_logprobs
    return request


def _set_text_or_ids(message, value, what):
    """Sets the `text` or `token_ids` of `message` (a GenerateRequest or its Source)."""
    if isinstance(value, str):
        message.text = value.encode("utf-8")
    elif isinstance(value, (list, tuple)) and all(isinstance(i, int) for i in value):
        message.token_ids.ids.extend(value)
    else:
        raise TypeError(f"{what} must be a str or a list of token ids, got {type(value).__name__}")


def _logprobs(entries):
    return [results.TokenLogprob(e.id, e.logprob, [(t.id, t.logprob) for t in e.top])
            for e in entries]


def chunk(tokens):
    return results.Chunk(list(tokens.ids), tokens.text, _logprobs(tokens.logprobs),
                         tokens.choice_index, _logprobs(tokens.prompt_logprobs))


def finished(message):
    t = message.timings
    return results.Finished(
        finish_reason=_FINISH_REASONS.get(message.finish_reason, "unspecified"),
        prompt_tokens=message.prompt_tokens, generated_tokens=message.generated_tokens,
        seed=message.seed, request_id=message.request_id,
        timings=results.Timings(t.queue_seconds, t.prefill_seconds, t.first_token_seconds,
                              t.total_seconds),
        choice_index=message.choice_index, session_handle=message.session_handle,
        hypotheses=[results.Hypothesis(list(h.ids), h.text, h.score, h.logprob_sum,
                                       _FINISH_REASONS.get(h.finish_reason, "unspecified"))
                    for h in message.hypotheses])


def completion(response):
    return results.Completion(
        text=response.text, token_ids=list(response.token_ids),
        logprobs=_logprobs(response.logprobs),
        prompt_logprobs=_logprobs(response.prompt_logprobs),
        finished=finished(response.finished) if response.HasField("finished") else None)


def health_name(response):
    return health_pb.HealthCheckResponse.ServingStatus.Name(response.status)

