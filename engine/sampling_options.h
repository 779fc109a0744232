// How a request's tokens are picked (docs/ARCHITECTURE.md, "Token selection"): the one set
// of sampling options and defaults. The engine's requests carry them
// (GenerationRequest::sampling), its entry checks them once (engine/request_validation.cc),
// and its sampler (engine/sampler.h) turns them into the selection op's columns
// (models/sampling_columns.h); kernels/sampling.h is their rule.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "kernels/sampling.h"

namespace slotserve::engine {

// Each option's neutral value switches it off; the rule and its order are kernels/sampling.h:
// repetition penalty, presence / frequency penalty, logit biases, (masks), temperature, top-k,
// top-p, min-p, then one draw from the request's random stream.
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
  // Seed of the request's own RNG stream: the same seed, prompt and options give the same
  // tokens whatever else is in the batch. Unset: the engine picks one and reports it in
  // Finished::seed.
  std::optional<uint64_t> seed;
  // OpenAI's logit_bias: each listed token's logit is shifted by its bias before the token is
  // chosen (step 2 of kernels/sampling.h; logprobs stay the raw distribution's). Distinct ids
  // in the vocabulary, biases in [-100, 100] (CheckLogitBias). Not with beam search.
  std::vector<kernels::BiasedToken> logit_bias;

  // Whether a penalty changes the logits, so a token needs the request's history.
  bool uses_penalties() const {
    return repetition_penalty != 1.0f || presence_penalty != 0.0f || frequency_penalty != 0.0f;
  }
};

// The one check of the options' ranges, run once per request at the engine's entry:
// INVALID_ARGUMENT naming the first bad field under `field` ("sampling" gives
// "sampling.top_p must be in (0, 1] (1 = off), got 1.5"). Seed and logit biases are not
// ranges: CheckLogitBias checks the biases against the vocabulary.
absl::Status CheckSamplingOptions(const SamplingOptions& options, absl::string_view field);

// Logit biases as OpenAI bounds them: INVALID_ARGUMENT quoting the first entry whose id is
// outside [0, vocab) or listed twice, or whose bias is not in [-100, 100] (`field` names the
// list: "sampling.logit_bias").
absl::Status CheckLogitBias(std::span<const kernels::BiasedToken> biases, int vocab,
                            absl::string_view field);

}  // namespace slotserve::engine
