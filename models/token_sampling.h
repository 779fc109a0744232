// How a request's tokens are picked (DESIGN §4): SamplingOptions is the one set of options and
// defaults (the engine's requests carry it, kernels/sampling.h is its rule), and TokenSampling
// is one row of a selecting model call (LanguageModel::StepAndSample, PrefillAndSample): the
// options plus what the request's history says about this token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "kernels/sampling.h"

namespace slotserve::models {

// Each option's neutral value switches it off; the rule and its order are kernels/sampling.h:
// repetition penalty, presence / frequency penalty, (masks), temperature, top-k, top-p, min-p,
// then one draw from the request's random stream.
struct SamplingOptions {
  // 0 = greedy (argmax, lowest id on ties); otherwise logits are divided by it. Must be >= 0.
  float temperature = 1.0f;
  // Keep only the k most likely tokens; 0 = off. Must be >= 0.
  int32_t top_k = 0;
  // Keep the smallest set of most likely tokens whose probability sum reaches top_p;
  // 1 = off. Must be in (0, 1].
  float top_p = 1.0f;
  // Drop tokens whose probability is below min_p times the most likely token's; 0 = off.
  // Must be in [0, 1].
  float min_p = 0.0f;
  // CTRL / Hugging Face style over prompt + generated tokens: a positive logit is divided by
  // it, a negative one multiplied. 1 = off. Must be > 0.
  float repetition_penalty = 1.0f;
  // OpenAI style over generated tokens only: logit -= presence_penalty * [count > 0]
  //                                                 + frequency_penalty * count.
  // 0 = off. Each must be in [-2, 2].
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;

  // Whether a penalty changes the logits, so a token needs the request's history.
  bool uses_penalties() const {
    return repetition_penalty != 1.0f || presence_penalty != 0.0f || frequency_penalty != 0.0f;
  }
};

// The one check of SamplingOptions' ranges, run once per request at the engine's entry
// (engine/request_validation.cc): INVALID_ARGUMENT naming the first bad field under `field`
// ("sampling" gives "sampling.top_p must be in (0, 1] (1 = off), got 1.5").
absl::Status CheckSamplingOptions(const SamplingOptions& options, absl::string_view field);

// Logit biases as OpenAI bounds them: INVALID_ARGUMENT quoting the first entry whose id is
// outside [0, vocab) or listed twice, or whose bias is not in [-100, 100] (`field` names the
// list: "sampling.logit_bias").
absl::Status CheckLogitBias(std::span<const kernels::BiasedToken> biases, int vocab,
                            absl::string_view field);

// One row of a selecting model call.
struct TokenSampling {
  SamplingOptions options;
  uint64_t seed = 0;        // the request's random stream (kernels/counter_rng.h)
  uint64_t draw_index = 0;  // which draw of that stream this token uses
  // The row's adjustments (kernels/sampling.h), from the request's history: every id of its
  // prompt and generated tokens with its generated count (needed only when options use a
  // penalty), the request's logit biases (distinct ids), and the ids it may not pick now. Must
  // stay valid for the call.
  std::span<const kernels::PenalisedToken> penalised = {};
  std::span<const kernels::BiasedToken> biased = {};
  std::span<const int32_t> masked = {};
  // Also hand back the row's raw logits (before any adjustment), for logprobs.
  bool want_raw_logits = false;
};

// The selecting calls' shape check: INVALID_ARGUMENT naming `call` unless there is one row per
// slot of a `rows`-row call, one output id per row, and `raw_logits` holds vocab floats per row
// that wants them. The rows' options are not checked again: the engine's entry did, once per
// request, and every caller below it passes options so checked.
absl::Status CheckTokenSampling(std::span<const TokenSampling> sampling, size_t rows,
                                size_t out_tokens, size_t raw_logits, int vocab, const char* call);

}  // namespace slotserve::models
