// Picks one token per row of logits on the model's device, so that only token ids cross to
// the host each decode step (penalties and masks, which need per-request history, are applied
// to the logits before this op).
//
// Per row r, with T = temperature[r]:
//   T == 0: argmax, lowest id on ties, NaN counting as -inf (id 0 when nothing is finite).
//   T > 0:  candidates are the finite logits; weight_i = exp((logit_i - max) / T). In rank
//           order (higher logit first, lower id on ties) keep the first top_k (0 = off), then
//           the shortest prefix of those whose weight reaches top_p of their total (1 = off),
//           then drop weights below min_p (0 = off; the heaviest weighs 1). With
//           u = UniformDraw(seeds[r], draw_index[r]) (kernels/counter_rng.h), the token is the
//           first kept id, walking ids upwards, whose cumulative weight exceeds u * total.
// The draw is a pure function of the row's own logits, options, seed and index: a request
// gets the same token whatever else is in the batch. Backends agree exactly on argmax and on
// top_k = 1; elsewhere float summation order may move a boundary by a rounding error.
// The cpu backend runs the reference: one sort per row is small beside the lm_head GEMM.
#pragma once

#include <cstdint>

#include "kernels/backend.h"

namespace slotserve::kernels {

struct SamplingParams {
  const float* logits = nullptr;  // [rows, logits_stride], first `vocab` of each row used
  int64_t logits_stride = 0;
  int rows = 0;
  int vocab = 0;
  // Per-row options, [rows] each, in the backend's device memory. top_k, top_p and min_p may
  // be null (off for every row).
  const float* temperature = nullptr;
  const int32_t* top_k = nullptr;
  const float* top_p = nullptr;
  const float* min_p = nullptr;
  const uint64_t* seeds = nullptr;
  const uint64_t* draw_index = nullptr;  // the draw's index in the row's stream
  int32_t* out_tokens = nullptr;         // [rows]
};

template <Backend B>
void LaunchSampling(const SamplingParams& params, Stream stream);

inline void LaunchSampling(Backend backend, const SamplingParams& params, Stream stream = nullptr) {
  Dispatch(backend, "sampling",
           [&](auto tag) { LaunchSampling<decltype(tag)::value>(params, stream); });
}

}  // namespace slotserve::kernels
