// ABC with learned control (docs/MODEL_FORMAT.md "The attention kinds"). Its memory has M rows
// (config.json's attention.slots, "memory slots" in the paper; called memory rows here so they are
// never mistaken for the server's state slots, which hold one request each). Per head the state is
//   K~ [M x dk], V~ [M x dv], z [M], m [M]   (in this order, row-major)
// with z, K~, V~ kept scaled by exp(-m). An all-zero block is empty: where z == 0, m is -inf.
// Our own models have dk = dv = head_dim; flash-linear-attention's ABC layer
// (docs/FLA_CHECKPOINTS.md §3.2) has dv != dk and clamped memory logits, hence value_dim and
// logit_min/logit_max, whose defaults leave the original op unchanged.
#pragma once

#include <cstdint>
#include <limits>

#include "kernels/backend.h"
#include "kernels/recurrent_state.h"

namespace slotserve::kernels {

struct AbcParams {
  int rows = 0;
  int heads = 0;
  int head_dim = 0;     // dk, of q and k; also sets the softmax scale 1/sqrt(dk)
  int memory_rows = 0;  // M
  // Row r of each input starts at ptr + r * in_stride; head h takes columns [h*dk, (h+1)*dk)
  // of q/k, [h*dv, (h+1)*dv) of v and [h*M, (h+1)*M) of memory_logits.
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  // s_t = slot_proj(x_t) of docs/MODEL_FORMAT.md "The attention kinds": one logit per memory row,
  // deciding how much of the token each row takes.
  const float* memory_logits = nullptr;
  int64_t in_stride = 0;
  float* out = nullptr;  // [rows, out_stride], heads concatenated: head h at [h*dv, (h+1)*dv)
  int64_t out_stride = 0;
  // The fields below come last so that positional initialisers of the fields above still work.
  int value_dim = 0;  // dv; 0 means head_dim (q and k keep head_dim = dk)
  // Each memory logit is clamped to [logit_min, logit_max] before use (fla's s_proj clamp_min /
  // clamp_max). Infinite bounds leave every logit, NaN included, as it is.
  float logit_min = -std::numeric_limits<float>::infinity();
  float logit_max = std::numeric_limits<float>::infinity();
};

// dv of `p`: value_dim, or head_dim where it is 0. constexpr so that the CUDA kernels can call it.
constexpr int AbcValueDim(const AbcParams& p) { return p.value_dim > 0 ? p.value_dim : p.head_dim; }

// The clamp of AbcParams::logit_min/logit_max. Written with comparisons rather than
// fmin/fmax so that a NaN logit stays NaN (as without bounds) on every backend.
constexpr float AbcClampLogit(float s, float logit_min, float logit_max) {
  s = s < logit_min ? logit_min : s;
  return s > logit_max ? logit_max : s;
}

// constexpr so that the CUDA kernels can call them on the device too.
constexpr int64_t AbcStateFloatsPerHead(int key_dim, int value_dim, int memory_rows) {
  return static_cast<int64_t>(memory_rows) * key_dim +
         static_cast<int64_t>(memory_rows) * value_dim + 2LL * memory_rows;
}
// dk = dv = head_dim (our models and the other memory controls of abc_control_attention.h).
constexpr int64_t AbcStateFloatsPerHead(int head_dim, int memory_rows) {
  return AbcStateFloatsPerHead(head_dim, head_dim, memory_rows);
}

inline int64_t AbcStateFloatsPerLayer(int heads, int key_dim, int value_dim, int memory_rows) {
  return static_cast<int64_t>(heads) * AbcStateFloatsPerHead(key_dim, value_dim, memory_rows);
}
inline int64_t AbcStateFloatsPerLayer(int heads, int head_dim, int memory_rows) {
  return AbcStateFloatsPerLayer(heads, head_dim, head_dim, memory_rows);
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
