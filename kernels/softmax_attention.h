// Causal softmax attention over a per-request KV cache: the growing-memory baseline.
// Per layer the state is K [max_context x heads*d], V [max_context x heads*d] (in this order);
// the token at position p is cached at row p. Callers guarantee positions < max_context.
// The cache holds fp32 values, or, with f16_cache (the server's --kv-cache-dtype f16), IEEE
// half values rounded to nearest even as each row is written: half the bytes to keep and,
// at large batches where decode reads the cache at memory bandwidth, half to read. Queries,
// scores, the softmax and the output stay fp32.
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
  bool f16_cache = false;  // the cache's rows are halves (the layer's state is then half as big)
};

// The fp32 cache's size in floats; an f16 cache takes half of it (SoftmaxCacheFloatsPerLayer).
inline int64_t SoftmaxStateFloatsPerLayer(int heads, int head_dim, int max_context) {
  return 2LL * max_context * heads * head_dim;
}
inline int64_t SoftmaxCacheFloatsPerLayer(int heads, int head_dim, int max_context,
                                          bool f16_cache) {
  const int64_t floats = SoftmaxStateFloatsPerLayer(heads, head_dim, max_context);
  return f16_cache ? floats / 2 : floats;  // 2 x max_context x width halves: an even count
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
