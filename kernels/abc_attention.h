// ABC with learned control (DESIGN §3). Its memory has M rows (config.json's attention.slots,
// "memory slots" in the paper; called memory rows here so they are never mistaken for the
// server's state slots, which hold one request each). Per head the state is
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
  int memory_rows = 0;  // M
  // Row r of each input starts at ptr + r * in_stride; head h takes columns [h*d, (h+1)*d)
  // of q/k/v and [h*M, (h+1)*M) of memory_logits.
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  // s_t = slot_proj(x_t) of DESIGN §3: one logit per memory row, deciding how much of the
  // token each row takes.
  const float* memory_logits = nullptr;
  int64_t in_stride = 0;
  float* out = nullptr;  // [rows, out_stride], heads concatenated
  int64_t out_stride = 0;
};

// constexpr so that the CUDA kernels can call it on the device too.
constexpr int64_t AbcStateFloatsPerHead(int head_dim, int memory_rows) {
  return 2LL * memory_rows * head_dim + 2LL * memory_rows;
}

inline int64_t AbcStateFloatsPerLayer(int heads, int head_dim, int memory_rows) {
  return static_cast<int64_t>(heads) * AbcStateFloatsPerHead(head_dim, memory_rows);
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
