// What a client asks the engine to generate: the prompt as token ids plus sampling, stopping
// and logprob options (docs/ARCHITECTURE.md "A request's path"). Parsed from the wire at the edge
// (server/); the engine validates it in Scheduler::Submit (see request_validation.h for the exact
// rules).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "engine/sampling_options.h"

namespace slotserve::engine {

// Engine-assigned handle of an accepted request (unique for the scheduler's lifetime).
using RequestId = uint64_t;

struct StoppingOptions {
  // 0 = the scheduler's default (SchedulerOptions::default_max_new_tokens). Must be in
  // [0, SchedulerOptions::max_new_tokens_limit]. Generation also ends (kLength) when the
  // model's longest context (LanguageModel::max_positions) is reached. 64-bit so that any
  // count a client sends (proto uint32) reaches validation unchanged and is quoted as sent.
  int64_t max_new_tokens = 0;
  // Until this many tokens are generated, eos and stop_token_ids are masked out of the
  // distribution (they cannot be sampled) and stop sequences do not stop generation (their
  // text is streamed). Must be in [0, max_new_tokens].
  int64_t min_new_tokens = 0;
  // Text; generation stops when the generated text contains one. The matched text and
  // anything after it is not streamed. Non-empty, valid UTF-8; needs a tokenizer.
  std::vector<std::string> stop_sequences;
  // Generation stops after any of these is generated (the token, and its text, is returned).
  std::vector<int32_t> stop_token_ids;
  // Do not stop at the model's eos token (it may still be generated and is then streamed).
  bool ignore_eos = false;
};

struct LogprobOptions {
  // Report each generated token's log probability under the model's raw distribution
  // (log-softmax of the logits, before penalties, temperature and truncation).
  bool enabled = false;
  // Also report the top_n most likely alternatives of each position (same distribution).
  // Must be in [0, SchedulerOptions::max_top_logprobs]; ignored unless enabled.
  int64_t top_n = 0;
  // Also score the prompt: each prompt token after the first under the distribution the model
  // gives it from the tokens before it (with the same top_n alternatives), reported once in
  // TokenChunk::prompt_logprobs (prompt_scores.h). Needs enabled; not with a session to
  // continue (its first token's context is the session's). With a seq2seq source the decoder's
  // prompt starts with decoder_start_id (Scheduler::Submit puts it there), so every token the
  // caller sent is scored, the first given the start token and the source. Such a request is
  // prefilled from token 0: a cached prefix state would skip rows it must score.
  bool prompt = false;
};

// Sessions (docs/ARCHITECTURE.md "Request state", session_store.h).
struct SessionOptions {
  // Keep the request's final state (with its last generated token, not yet fed, as the
  // pending token) under a new handle, or under `handle` when continuing one; the handle is
  // reported in Finished::session_handle. Not with n > 1.
  bool keep = false;
  // Continue this session: the request starts from its stored state and feeds the pending
  // token, then prompt_ids. Empty: a new context. NOT_FOUND (unknown or expired) and
  // FAILED_PRECONDITION (another request holds it) come from Submit.
  std::string handle;
};

// Beam search (docs/ARCHITECTURE.md "Encoder–decoder models", engine/beam_search.h): instead of
// sampling, keep the `width` most likely hypotheses each step and return the n_best finished ones,
// best first, scored sum(logprob) / length^length_penalty. Deterministic, so it refuses sampling
// options, n > 1, logprobs, stop sequences and session.keep (request_validation.h lists the rules).
struct BeamOptions {
  // Hypotheses kept per step; 1 = no beam search (the request samples as usual). Must be in
  // [1, SchedulerOptions::max_beam_width capped by max_slots]; a beam request holds `width`
  // slots from admission, and gives each back as soon as a hypothesis no longer needs it.
  int64_t width = 1;
  // Finite. 0 = rank by the plain sum of logprobs; > 0 favours longer hypotheses.
  double length_penalty = 0.0;
  // Finished hypotheses returned (Finished::hypotheses). Must be in [1, width].
  int64_t n_best = 1;

  bool enabled() const { return width > 1; }
};

struct GenerationRequest {
  // The client's label for logs and metrics; may be empty. Not the engine's RequestId.
  std::string request_id;
  // The prompt, already tokenised (the edge adds BOS if it wants one). Must not be empty;
  // every id must be in [0, vocab_size).
  std::vector<int32_t> prompt_ids;
  SamplingOptions sampling;
  StoppingOptions stopping;
  LogprobOptions logprobs;
  // Choices (docs/ARCHITECTURE.md "Request state" fork): the prompt is prefilled once and its state
  // copied into n slots; choice i draws from seed + i and its events carry choice_index i.
  // Admission waits for n free slots. Must be in [1, min(SchedulerOptions::max_n, max_slots)].
  int64_t n = 1;
  SessionOptions session;
  BeamOptions beam;
  // Encoder–decoder models only (docs/ARCHITECTURE.md "Encoder–decoder models",
  // source_validation.h): the source to translate or summarise, as token ids (a text source is
  // tokenised at the edge and ends with eos, no BOS). At admission the engine runs the encoder over
  // it into the slot's cross memory; the decoder's input is then [decoder_start_id] + prompt_ids
  // (the scheduler prepends the start id at Submit). Empty for decoder-only models and for a
  // session's continuation, whose state already holds its cross memory.
  std::vector<int32_t> source_ids;
  // The request ends with DEADLINE_EXCEEDED when still running at this time (checked once
  // per engine step). A deadline already past refuses the request at Submit.
  absl::Time deadline = absl::InfiniteFuture();
};

// State slots the request holds from admission: n for a fork, beam.width for beam search.
inline int64_t SlotsNeeded(const GenerationRequest& request) {
  return request.beam.enabled() ? request.beam.width : request.n;
}

}  // namespace slotserve::engine
