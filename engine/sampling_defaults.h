// Sampling options a request gets when it sets none of its own: the model directory's
// generation_config.json defaults (vLLM's `--generation-config auto`). The engine cannot tell
// a field left unset from one set to the built-in default, so the front ends, which can, apply
// them as they parse (each says which fields the request set); the scheduler only carries them
// (SchedulerOptions::sampling_defaults) for the front ends and ModelInfo to read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/generation_request.h"
#include "models/generation_config.h"

namespace slotserve::engine {

// Each unset member leaves the built-in default (SamplingOptions) in place.
struct SamplingDefaults {
  std::optional<float> temperature;
  std::optional<int32_t> top_k;
  std::optional<float> top_p;
  std::optional<float> min_p;
  std::optional<float> repetition_penalty;

  bool empty() const { return !temperature && !top_k && !top_p && !min_p && !repetition_penalty; }
};

// The defaults generation_config.json gives: its temperature, top_k, top_p, min_p and
// repetition_penalty; `do_sample: false` (Hugging Face's greedy decoding) is temperature 0 and
// drops top_k, top_p and min_p, which only shape sampling.
SamplingDefaults SamplingDefaultsFrom(const models::GenerationConfig& config);

// What a request that sets no sampling field samples with: the built-in options with
// `defaults` applied (GET /v1/models and ModelInfo show it).
SamplingOptions DefaultSampling(const SamplingDefaults& defaults);

// "temperature 0.6, top_p 0.9" (the fields set, in this header's order), or "none".
std::string DescribeSamplingDefaults(const SamplingDefaults& defaults);

// Which of those fields the request set itself.
struct SampledFieldsSet {
  bool temperature = false;
  bool top_k = false;
  bool top_p = false;
  bool min_p = false;
  bool repetition_penalty = false;
};

// Gives every field the request did not set its default. A beam search request is left as it
// is: it is greedy by definition and refuses other sampling options.
void ApplySamplingDefaults(const SamplingDefaults& defaults, const SampledFieldsSet& set,
                           GenerationRequest* request);

}  // namespace slotserve::engine
