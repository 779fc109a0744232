// Runs the host selection op (kernels/sampling.h, cpu backend: what a cpu model runs) on one
// row of logits, for tests that check what the engine's sampling gives for given logits.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/sampler.h"
#include "engine/sampling_options.h"
#include "kernels/sampling.h"
#include "models/sampling_columns.h"

namespace slotserve::engine::testing {

// The token row 0 of `columns` selects from `logits` (adjusted in place by the row's
// penalties, biases and masks, as the op does).
inline int32_t SelectOnHost(std::span<float> logits, const models::SamplingColumns& columns) {
  int32_t token = -1;
  kernels::SamplingParams params;
  params.logits = logits.data();
  params.logits_stride = static_cast<int64_t>(logits.size());
  params.rows = 1;
  params.vocab = static_cast<int>(logits.size());
  params.temperature = columns.temperature.data();
  params.top_k = columns.top_k.data();
  params.top_p = columns.top_p.data();
  params.min_p = columns.min_p.data();
  params.seeds = columns.seeds.data();
  params.draw_index = columns.draw_index.data();
  params.repetition_penalty = columns.repetition_penalty.data();
  params.presence_penalty = columns.presence_penalty.data();
  params.frequency_penalty = columns.frequency_penalty.data();
  params.penalised_offsets = columns.penalised_offsets.data();
  params.penalised = columns.penalised.data();
  params.biased_offsets = columns.biased_offsets.data();
  params.biased = columns.biased.data();
  params.masked_offsets = columns.masked_offsets.data();
  params.masked = columns.masked.data();
  params.out_tokens = &token;
  kernels::LaunchSampling(kernels::Backend::kCpu, params);
  return token;
}

// One row of `options` with draw `draw_index` of stream `seed`, penalising `penalised` and
// nothing masked.
inline models::SamplingColumns RowOf(const SamplingOptions& options, uint64_t seed,
                                     uint64_t draw_index,
                                     std::span<const kernels::PenalisedToken> penalised = {}) {
  models::SamplingColumns columns;
  columns.temperature = {options.temperature};
  columns.top_k = {options.top_k};
  columns.top_p = {options.top_p};
  columns.min_p = {options.min_p};
  columns.repetition_penalty = {options.repetition_penalty};
  columns.presence_penalty = {options.presence_penalty};
  columns.frequency_penalty = {options.frequency_penalty};
  columns.seeds = {seed};
  columns.draw_index = {draw_index};
  columns.AddLists(penalised, {}, {});
  columns.want_raw_logits = {0};
  return columns;
}

// The token options `options` select from a copy of `logits` with draw `draw_index` of stream
// `seed` (no history, nothing masked).
inline int32_t SelectOnHost(std::span<const float> logits, const SamplingOptions& options,
                            uint64_t seed, uint64_t draw_index) {
  std::vector<float> row(logits.begin(), logits.end());
  return SelectOnHost(row, RowOf(options, seed, draw_index));
}

// `sampler`'s row for its next token, with `masked` out.
inline models::SamplingColumns NextRow(const RequestSampler& sampler,
                                       std::span<const int32_t> masked = {}) {
  models::SamplingColumns columns;
  sampler.AddNextToken(columns, masked, /*want_raw_logits=*/false);
  return columns;
}

// Selects with `sampler`'s next row (nothing masked) and accepts the token, as the engine does.
inline int32_t SelectAndAccept(RequestSampler& sampler, std::span<float> logits) {
  const int32_t token = SelectOnHost(logits, NextRow(sampler));
  sampler.Accept(token);
  return token;
}

}  // namespace slotserve::engine::testing
