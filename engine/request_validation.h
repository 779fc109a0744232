// The checks Scheduler::Submit runs before accepting a request. Each error is
// INVALID_ARGUMENT (FAILED_PRECONDITION for stop sequences without a tokenizer) and names the
// field as the wire API does ("sampling.top_p must be in (0, 1], got 0"), says what was
// expected and what was given. The sampling options' ranges are CheckSamplingOptions
// (engine/sampling_options.h), their one check: nothing below the engine checks them again.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "engine/generation_request.h"

namespace slotserve::engine {

struct RequestLimits {
  int vocab_size = 0;
  int64_t max_positions = 0;  // the model's longest sequence
  int max_prompt_tokens = 0;
  int default_max_new_tokens = 0;
  int max_new_tokens_limit = 0;
  int max_stop_sequences = 0;
  int max_stop_sequence_bytes = 0;
  int max_top_logprobs = 0;
  int max_n = 1;           // SchedulerOptions::max_n, capped by the slots in the pool
  int max_beam_width = 1;  // SchedulerOptions::max_beam_width, capped by the slots in the pool
  bool has_tokenizer = false;
  // Encoder–decoder models (source_validation.h): a source is required and bounded.
  bool seq2seq = false;
  int max_source_tokens = 0;
};

// Beam search (beam.width > 1) is deterministic and returns its n-best in one stream, so it
// refuses what would contradict that, each with its own message: sampling options other than
// greedy's (temperature other than 0, top_k, top_p, min_p, penalties, a seed), n > 1,
// logprobs (each hypothesis carries its logprob_sum instead), stop sequences (hypotheses end at
// eos, stop_token_ids and max_new_tokens) and sessions (no single final state to keep; continuing
// one is not offered either).
absl::Status ValidateGenerationRequest(const GenerationRequest& request,
                                       const RequestLimits& limits);

// max_new_tokens with 0 replaced by the default.
int32_t EffectiveMaxNewTokens(const StoppingOptions& stopping, const RequestLimits& limits);

}  // namespace slotserve::engine
