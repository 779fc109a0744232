// How one decode row's next token is picked when the model samples it on its own device
// (LanguageModel::StepAndSample): the options of kernels/sampling.h for that row. Penalties and
// masks need the request's history, so rows that use them are sampled on the host instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/status/status.h"

namespace slotserve::models {

struct TokenSampling {
  float temperature = 0.0f;  // 0 = greedy (argmax, lowest id on ties)
  int32_t top_k = 0;         // 0 = off
  float top_p = 1.0f;        // (0, 1]; 1 = off
  float min_p = 0.0f;        // [0, 1]; 0 = off
  uint64_t seed = 0;         // the request's random stream (kernels/counter_rng.h)
  uint64_t draw_index = 0;   // which draw of that stream this token uses
};

// INVALID_ARGUMENT naming `call` unless there is one option and one output id per row of a
// `rows`-row step and every option is in range (temperature finite and >= 0, top_k >= 0,
// top_p in (0, 1], min_p in [0, 1]; the message names the row and the field).
absl::Status CheckTokenSampling(std::span<const TokenSampling> sampling, size_t rows,
                                size_t out_tokens, const char* call);

}  // namespace slotserve::models
