// Softmax attention without a mask over the rows of one sequence: the encoder's
// self-attention (docs/ARCHITECTURE.md "Encoder–decoder models"), every source position attending
// to every other. out[r, h] = softmax(q[r, h] K_hᵀ / sqrt(d)) V_h over all `rows` rows; no state.
#pragma once

#include <cstdint>

#include "kernels/backend.h"

namespace slotserve::kernels {

struct BidirectionalAttentionParams {
  int rows = 0;
  int heads = 0;
  int head_dim = 0;
  const float* q = nullptr;  // [rows x heads*d] each, rows `in_stride` floats apart
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t in_stride = 0;
  float* out = nullptr;
  int64_t out_stride = 0;
};

template <Backend B>
void LaunchBidirectionalAttention(const BidirectionalAttentionParams& params, Stream stream);

inline void LaunchBidirectionalAttention(Backend backend,
                                         const BidirectionalAttentionParams& params,
                                         Stream stream = nullptr) {
  Dispatch(backend, "bidirectional_attention",
           [&](auto tag) { LaunchBidirectionalAttention<decltype(tag)::value>(params, stream); });
}

}  // namespace slotserve::kernels
