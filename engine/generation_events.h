// What the engine reports back for one request: streamed token chunks, then exactly one
// Finished. Delivered to a GenerationSink on the engine thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace slotserve::engine {

enum class FinishReason {
  kLength,        // max_new_tokens (or the model's longest context) reached
  kEos,           // the model's eos token was generated (and ignore_eos was off)
  kStopToken,     // one of stopping.stop_token_ids was generated (the proto maps it to EOS)
  kStopSequence,  // the generated text contains one of stopping.stop_sequences
  kCancelled,     // cut off: see Finished::status for why
};

// "length", "eos", "stop_token", "stop_sequence", "cancelled".
std::string_view FinishReasonName(FinishReason reason);

struct TokenLogprob {
  int32_t id = 0;
  float logprob = 0.0f;
};

// One generated token's log probability and the most likely alternatives at its position
// (descending, ties by lower id), all under the raw model distribution (see LogprobOptions).
struct GeneratedTokenLogprobs {
  TokenLogprob chosen;
  std::vector<TokenLogprob> top;
};

// Tokens generated since the last chunk and the text they completed.
// - `ids` are reported as soon as they are sampled (including eos / stop tokens).
// - `text` lags behind `ids` where needed: bytes of an incomplete UTF-8 character and text
//   that could be the start of a stop sequence are held back, so a chunk may carry ids and
//   no text, or (the final flush) text and no ids. `text` is always valid UTF-8 and never
//   splits a character; the concatenation of all chunks' text is the generated text.
// - `logprobs` has one entry per id when LogprobOptions::enabled, else is empty.
// Without a tokenizer `text` is always empty.
// - `prompt_logprobs` is set once, in choice 0's first chunk (before its first token), when
//   LogprobOptions::prompt: prompt tokens 1..size-1 in order (the first has no context to be
//   scored in); the same for every choice, which all share the prompt.
struct TokenChunk {
  int32_t choice_index = 0;  // which choice (GenerationRequest::n) the tokens belong to
  std::vector<int32_t> ids;
  std::string text;
  std::vector<GeneratedTokenLogprobs> logprobs;
  std::optional<std::vector<GeneratedTokenLogprobs>> prompt_logprobs;
};

// One finished beam-search hypothesis (BeamOptions): its generated ids (an ending eos or stop
// token included), their text, and its score = logprob_sum / ids.size()^length_penalty, where
// logprob_sum adds the raw log-softmax of each id (double precision).
struct BeamHypothesis {
  std::vector<int32_t> ids;
  std::string text;
  double score = 0.0;
  double logprob_sum = 0.0;
  FinishReason reason = FinishReason::kLength;
};

struct GenerationTimings {
  absl::Duration queue;        // Submit -> admitted (slot acquired)
  absl::Duration prefill;      // admitted -> whole prompt absorbed
  absl::Duration first_token;  // Submit -> first token sampled (time to first token)
  absl::Duration total;        // Submit -> finished
};

struct Finished {
  int32_t choice_index = 0;  // which choice ended
  // True on the request's last Finished: every choice has ended (always true when n == 1, and
  // for a request that ends before it was admitted, which then ends with one Finished).
  bool request_done = true;
  // Meaningful when status is OK. When status is not OK the reason is kCancelled.
  FinishReason reason = FinishReason::kLength;
  // OK for a normal end (length, eos, stop token, stop sequence). Otherwise:
  //   CANCELLED          Scheduler::Cancel was called (e.g. the client went away)
  //   DEADLINE_EXCEEDED  GenerationRequest::deadline passed
  //   UNAVAILABLE        the scheduler was stopped before the request finished
  //   anything else      the model failed (the message says how)
  absl::Status status;
  int32_t prompt_tokens = 0;
  int32_t generated_tokens = 0;
  uint64_t seed = 0;  // the seed the request's RNG stream used (given or picked)
  GenerationTimings timings;
  // The session that holds the request's final state (SessionOptions::keep, status OK).
  std::string session_handle;
  // Beam search (BeamOptions), status OK: the n_best finished hypotheses, best first. The
  // request's one TokenChunk carried hypotheses[0]'s ids and text; reason and
  // generated_tokens are hypotheses[0]'s.
  std::vector<BeamHypothesis> hypotheses;
};

// Metric label for a finished request: FinishReasonName for OK, else "cancelled",
// "deadline_exceeded", "shutdown" (UNAVAILABLE) or "error".
std::string_view OutcomeLabel(const Finished& finished);

// Receives one request's events. Called on the engine thread (the OnFinished of a request
// whose end stores or releases a session: on the session writer's thread, after the store
// answered), never concurrently for one sink: any number of OnTokens, then one OnFinished per
// choice (the last with request_done),
// then nothing (for every request Submit accepted). Implementations must return quickly and never
// block (push to a queue and notify), since the whole batch waits for them.
class GenerationSink {
 public:
  virtual ~GenerationSink() = default;
  virtual void OnTokens(const TokenChunk& chunk) = 0;
  virtual void OnFinished(const Finished& finished) = 0;
};

}  // namespace slotserve::engine
