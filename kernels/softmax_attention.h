// Causal softmax attention over a per-request KV cache: the growing-memory baseline.
// Per layer the state is K [max_context x heads*d], V [max_context x heads*d] (in this order);
// the token at position p is cached at row p. Callers guarantee positions < max_context.
#pragma once

#include <cstdint>

#include "kernels/backend.h"
#include "kernels/recurrent_state.h"

namespace slotserve::kernels {

struct SoftmaxAttentionParams {
  int rows = 0;
  int heads = 0;
  int head_dim = 0;
  int max_context = 0;
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t in_stride = 0;
  float* out = nullptr;
  int64_t out_stride = 0;
};

inline int64_t SoftmaxStateFloatsPerLayer(int heads, int head_dim, int max_context) {
  return 2LL * max_context * heads * head_dim;
}

template <Backend B>
void LaunchSoftmaxAttentionPrefill(const SoftmaxAttentionParams& params,
                                   const PrefillTarget& target, Stream stream);
template <Backend B>
void LaunchSoftmaxAttentionStep(const SoftmaxAttentionParams& params, const StepTarget& target,
                                Stream stream);

inline void LaunchSoftmaxAttentionPrefill(Backend backend, const SoftmaxAttentionParams& params,
                                          const PrefillTarget& target, Stream stream = nullptr) {
  Dispatch(backend, "softmax_attention_prefill", [&](auto tag) {
    LaunchSoftmaxAttentionPrefill<decltype(tag)::value>(params, target, stream);
  });
}
inline void LaunchSoftmaxAttentionStep(Backend backend, const SoftmaxAttentionParams& params,
                                       const StepTarget& target, Stream stream = nullptr) {
  Dispatch(backend, "softmax_attention_step", [&](auto tag) {
    LaunchSoftmaxAttentionStep<decltype(tag)::value>(params, target, stream);
  });
}

}  // namespace slotserve::kernels
