// Compresses a sequence's key/value rows into M memory rows per head by softmax weights over
// the positions: the cross-memory build of ABC's cross attention and of Luna's packing
// (docs/ARCHITECTURE.md "Encoder–decoder models"). For head h and memory row j, with logits l[i]
// over the positions i:
//   α = softmax_i(logit_scale · l[i]);  K̄[j] = Σ_i α_i K_h[i];  V̄[j] = Σ_i α_i V_h[i]
// The logits are given (abc: cross.slot_proj(X), column h*M + j of each position's row) or,
// when `queries` is set, formed here as l[i] = queries_h[j] · K_h[i] (luna: P = pq_proj(luna_p)
// against the filtered keys). Runs once per request at Encode, so it favours clarity.
#pragma once

#include <cstdint>

#include "kernels/backend.h"

namespace slotserve::kernels {

struct SoftmaxPoolingParams {
  int positions = 0;  // k >= 1
  int heads = 0;
  int head_dim = 0;
  int memory_rows = 0;  // M (abc slots) or L (luna length)
  // Either logits [positions x heads*M] rows `logits_stride` apart, or queries [M x heads*d]
  // (dense); exactly one is set.
  const float* logits = nullptr;
  int64_t logits_stride = 0;
  const float* queries = nullptr;
  float logit_scale = 1.0f;
  const float* keys = nullptr;  // [positions x heads*d], rows `in_stride` apart
  const float* values = nullptr;
  int64_t in_stride = 0;
  float* out_keys = nullptr;  // [M x heads*d] dense, e.g. a slot's memory
  float* out_values = nullptr;
};

template <Backend B>
void LaunchSoftmaxPooling(const SoftmaxPoolingParams& params, Stream stream);

inline void LaunchSoftmaxPooling(Backend backend, const SoftmaxPoolingParams& params,
                                 Stream stream = nullptr) {
  Dispatch(backend, "softmax_pooling",
           [&](auto tag) { LaunchSoftmaxPooling<decltype(tag)::value>(params, stream); });
}

}  // namespace slotserve::kernels
