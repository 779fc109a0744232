// Random feature attention (docs/MODEL_FORMAT.md "The attention kinds"). Per head the state is S
// [2D x d], z [2D] (in this
// order). phi(u) = feature_scale * [sin(W u^), cos(W u^)], u^ = u / (|u| + norm_eps), with
// "concat" (all sines then all cosines) or "interleave" (sin0, cos0, sin1, ...) feature order.
#pragma once

#include <cstdint>

#include "kernels/backend.h"
#include "kernels/recurrent_state.h"

namespace slotserve::kernels {

struct RfaParams {
  int rows = 0;
  int heads = 0;
  int head_dim = 0;
  int features = 0;  // D
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  // Gate logits before the sigmoid, head h at column h; null means gate=false.
  const float* gate_logits = nullptr;
  int64_t in_stride = 0;  // row stride of q, k, v and gate_logits
  // W~ = rfa_random * rfa_sigma, [heads, D, d] row-major (sigma already folded in).
  const float* projection = nullptr;
  float feature_scale = 1.0f;
  float eps = 1.0f;       // lower bound of the denominator phi(q).z
  float norm_eps = 1e-3f;
  bool interleave = false;
  float* out = nullptr;
  int64_t out_stride = 0;
};

inline int64_t RfaStateFloatsPerLayer(int heads, int head_dim, int features) {
  return static_cast<int64_t>(heads) * (2LL * features * head_dim + 2LL * features);
}

template <Backend B>
void LaunchRfaPrefill(const RfaParams& params, const PrefillTarget& target, Stream stream);
template <Backend B>
void LaunchRfaStep(const RfaParams& params, const StepTarget& target, Stream stream);

inline void LaunchRfaPrefill(Backend backend, const RfaParams& params, const PrefillTarget& target,
                             Stream stream = nullptr) {
  Dispatch(backend, "rfa_prefill",
           [&](auto tag) { LaunchRfaPrefill<decltype(tag)::value>(params, target, stream); });
}
inline void LaunchRfaStep(Backend backend, const RfaParams& params, const StepTarget& target,
                          Stream stream = nullptr) {
  Dispatch(backend, "rfa_step",
           [&](auto tag) { LaunchRfaStep<decltype(tag)::value>(params, target, stream); });
}

}  // namespace slotserve::kernels
