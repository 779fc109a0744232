// Causal Luna (docs/MODEL_FORMAT.md "The attention kinds"). Per head the state is A [d x L], C [L x
// d] (in this order); the
// step count t is the request's position + 1, taken from the target, not stored.
//   p = act(pc . pq^T);  A += k (x) p;  C += p (x) v;  a = softmax((q/sqrt(d)) . A / t);  out = a.C/t
#pragma once

#include <cstdint>

#include "kernels/backend.h"
#include "kernels/recurrent_state.h"

namespace slotserve::kernels {

enum class LunaActivation { kSoftplus, kElu1 };  // softplus with beta = ln 2; elu(u) + 1

struct LunaParams {
  int rows = 0;
  int heads = 0;
  int head_dim = 0;
  int length = 0;  // L
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;   // equals k when tie_kv
  const float* pc = nullptr;  // pc_proj(x), head h at columns [h*d, (h+1)*d)
  int64_t in_stride = 0;
  // pq = pq_proj(luna_p) / sqrt(d), [L, heads*d] row-major, computed once at load.
  const float* pq = nullptr;
  LunaActivation activation = LunaActivation::kSoftplus;
  float* out = nullptr;
  int64_t out_stride = 0;
};

inline int64_t LunaStateFloatsPerLayer(int heads, int head_dim, int length) {
  return static_cast<int64_t>(heads) * 2LL * head_dim * length;
}

template <Backend B>
void LaunchLunaPrefill(const LunaParams& params, const PrefillTarget& target, Stream stream);
template <Backend B>
void LaunchLunaStep(const LunaParams& params, const StepTarget& target, Stream stream);

inline void LaunchLunaPrefill(Backend backend, const LunaParams& params,
                              const PrefillTarget& target, Stream stream = nullptr) {
  Dispatch(backend, "luna_prefill",
           [&](auto tag) { LaunchLunaPrefill<decltype(tag)::value>(params, target, stream); });
}
inline void LaunchLunaStep(Backend backend, const LunaParams& params, const StepTarget& target,
                           Stream stream = nullptr) {
  Dispatch(backend, "luna_step",
           [&](auto tag) { LaunchLunaStep<decltype(tag)::value>(params, target, stream); });
}

}  // namespace slotserve::kernels
