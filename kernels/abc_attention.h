// ABC with learned control (DESIGN §3). Per head the state is
//   K~ [M x d], V~ [M x d], z [M], m [M]   (in this order, row-major)
// with z, K~, V~ kept scaled by exp(-m). An all-zero block is empty: where z == 0, m is -inf.
#pragma once

#include <cstdint>

#include "kernels/backend.h"
#include "kernels/recurrent_state.h"

namespace slotserve::kernels {

struct AbcParams {
  int rows = 0;
  int heads = 0;
  int head_dim = 0;
  int slots = 0;  // M
  // Row r of each input starts at ptr + r * in_stride; head h takes columns [h*d, (h+1)*d)
  // of q/k/v and [h*M, (h+1)*M) of slot_logits.
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  const float* slot_logits = nullptr;
  int64_t in_stride = 0;
  float* out = nullptr;  // [rows, out_stride], heads concatenated
  int64_t out_stride = 0;
};

inline int64_t AbcStateFloatsPerLayer(int heads, int head_dim, int slots) {
  return static_cast<int64_t>(heads) * (2LL * slots * head_dim + 2LL * slots);
}

template <Backend B>
void LaunchAbcPrefill(const AbcParams& params, const PrefillTarget& target, Stream stream);
template <Backend B>
void LaunchAbcStep(const AbcParams& params, const StepTarget& target, Stream stream);

inline void LaunchAbcPrefill(Backend backend, const AbcParams& params, const PrefillTarget& target,
                             Stream stream = nullptr) {
  Dispatch(backend, "abc_prefill",
           [&](auto tag) { LaunchAbcPrefill<decltype(tag)::value>(params, target, stream); });
}
inline void LaunchAbcStep(Backend backend, const AbcParams& params, const StepTarget& target,
                          Stream stream = nullptr) {
  Dispatch(backend, "abc_step",
           [&](auto tag) { LaunchAbcStep<decltype(tag)::value>(params, target, stream); });
}

}  // namespace slotserve::kernels
