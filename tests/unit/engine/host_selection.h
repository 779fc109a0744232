// Runs the host selection op (kernels/sampling.h, cpu backend: what a cpu model runs) on one
// row of logits, for tests that check what the engine's sampling gives for given logits.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/sampler.h"
#include "kernels/sampling.h"
#include "models/token_sampling.h"

namespace slotserve::engine::testing {

// The token `row` selects from `logits` (adjusted in place by the row's penalties, biases and
// masks, as the op does).
inline int32_t SelectOnHost(std::span<float> logits, const models::TokenSampling& row) {
  const models::SamplingOptions& o = row.options;
  const int32_t penalised_offsets[2] = {0, static_cast<int32_t>(row.penalised.size())};
  const int32_t biased_offsets[2] = {0, static_cast<int32_t>(row.biased.size())};
  const int32_t masked_offsets[2] = {0, static_cast<int32_t>(row.masked.size())};
  int32_t token = -1;
  kernels::SamplingParams params;
  params.logits = logits.data();
  params.logits_stride = static_cast<int64_t>(logits.size());
  params.rows = 1;
  params.vocab = static_cast<int>(logits.size());
  params.temperature = &o.temperature;
  params.top_k = &o.top_k;
  params.top_p = &o.top_p;
  params.min_p = &o.min_p;
  params.seeds = &row.seed;
  params.draw_index = &row.draw_index;
  params.repetition_penalty = &o.repetition_penalty;
  params.presence_penalty = &o.presence_penalty;
  params.frequency_penalty = &o.frequency_penalty;
  params.penalised_offsets = penalised_offsets;
  params.penalised = row.penalised.data();
  params.biased_offsets = biased_offsets;
  params.biased = row.biased.data();
  params.masked_offsets = masked_offsets;
  params.masked = row.masked.data();
  params.out_tokens = &token;
  kernels::LaunchSampling(kernels::Backend::kCpu, params);
  return token;
}

// The token options `options` select from a copy of `logits` with draw `draw_index` of stream
// `seed` (no history, nothing masked).
inline int32_t SelectOnHost(std::span<const float> logits, const models::SamplingOptions& options,
                            uint64_t seed, uint64_t draw_index) {
  std::vector<float> row(logits.begin(), logits.end());
  return SelectOnHost(row, {.options = options, .seed = seed, .draw_index = draw_index});
}

// Selects with `sampler`'s next row (nothing masked) and accepts the token, as the engine does.
inline int32_t SelectAndAccept(RequestSampler& sampler, std::span<float> logits) {
  const int32_t token = SelectOnHost(logits, sampler.NextToken({}, /*want_raw_logits=*/false));
  sampler.Accept(token);
  return token;
}

}  // namespace slotserve::engine::testing
