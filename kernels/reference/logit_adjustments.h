// Steps 1 to 3 of kernels/sampling.h (penalties, biases, then masks) on one host row, shared by the
// host backends (reference and cpu): the per-logit arithmetic is PenalisedLogit, which the
// cuda backend uses too, so every backend adjusts a row to the same bits.
#pragma once

#include <cmath>
#include <limits>

#include "kernels/sampling.h"

namespace slotserve::kernels::host {

// Adjusts row `row` of p.logits (host memory) in place.
inline void ApplyLogitAdjustments(const SamplingParams& p, int row) {
  float* logits = p.logits + row * p.logits_stride;
  const auto in_vocab = [&](int32_t id) { return id >= 0 && id < p.vocab; };
  if (p.penalised_offsets != nullptr && p.penalised != nullptr) {
    const float repetition = p.repetition_penalty != nullptr ? p.repetition_penalty[row] : 1.0f;
    const float presence = p.presence_penalty != nullptr ? p.presence_penalty[row] : 0.0f;
    const float frequency = p.frequency_penalty != nullptr ? p.frequency_penalty[row] : 0.0f;
    for (int32_t i = p.penalised_offsets[row]; i < p.penalised_offsets[row + 1]; ++i) {
      const PenalisedToken token = p.penalised[i];
      if (!in_vocab(token.id)) continue;
      logits[token.id] = PenalisedLogit(logits[token.id], token, repetition, presence, frequency);
    }
  }
  if (p.biased_offsets != nullptr && p.biased != nullptr) {
    for (int32_t i = p.biased_offsets[row]; i < p.biased_offsets[row + 1]; ++i) {
      if (in_vocab(p.biased[i].id)) logits[p.biased[i].id] += p.biased[i].bias;
    }
  }
  if (p.masked_offsets != nullptr && p.masked != nullptr) {
    for (int32_t i = p.masked_offsets[row]; i < p.masked_offsets[row + 1]; ++i) {
      if (in_vocab(p.masked[i])) logits[p.masked[i]] = -std::numeric_limits<float>::infinity();
    }
  }
}

}  // namespace slotserve::kernels::host
