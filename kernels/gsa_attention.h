// fla's gated slot attention, GSA (docs/FLA_CHECKPOINTS.md §3.3; float64 form in
// python/slotserve_ref/fla/gsa_mixer.py). Each kv head g keeps M memory slots:
//   hk [dk x M]   (row-major)   then   hv [M x dv]   (row-major)
// and kv heads follow one another in a layer's state. All zeros is a fresh request. Per token,
// with phi the feature map, silu(x) = x sigmoid(x) and n = gate_logit_normalizer:
//   k = phi(k_g), v = silu(v_g), f = logsigmoid(forget_logits_g) / n (<= 0)
//   decay = exp(f), s = 1 - exp(f)                             (per slot, M values)
//   hk[:, m] = decay[m] hk[:, m] + s[m] k,   hv[m, :] = decay[m] hv[m, :] + s[m] v
//   out_h = softmax_m(phi(q_h) . hk[:, m]) hv      for each query head h of the group (scale 1)
// Unlike ABC there is no normaliser: the forget gate keeps the state bounded, so the state is
// exactly fla's cache (one copy per kv head where fla repeats it per query head).
#pragma once

#include <cstdint>

#include "kernels/backend.h"
#include "kernels/recurrent_state.h"

namespace slotserve::kernels {

// fla/modules/feature_map.py: SwishFeatureMap, ReLUFeatureMap, T2RFeatureMap.
enum class GsaFeatureMap { kSwish, kRelu, kT2r };

struct GsaParams {
  int rows = 0;
  int heads = 0;        // H query heads
  int kv_heads = 0;     // Hkv, divides H; query head h reads kv head h / (H / Hkv)
  int key_dim = 0;      // dk
  int value_dim = 0;    // dv
  int memory_rows = 0;  // M slots
  // Row r of each input starts at ptr + r * in_stride (raw projections, after fla's short conv
  // when the model has one):
  const float* q = nullptr;              // head h at columns [h*dk, (h+1)*dk)
  const float* k = nullptr;              // kv head g at [g*dk, (g+1)*dk)
  const float* v = nullptr;              // kv head g at [g*dv, (g+1)*dv)
  const float* forget_logits = nullptr;  // f_proj(x): kv head g at [g*M, (g+1)*M)
  int64_t in_stride = 0;
  GsaFeatureMap feature_map = GsaFeatureMap::kSwish;
  // kT2r: [dk, dk] (nn.Linear layout, out x in), phi(x) = relu(x W^T), shared by all heads, q
  // and k.
  const float* t2r_weight = nullptr;
  float gate_logit_normalizer = 8.0f;
  float* out = nullptr;  // [rows, out_stride], head h at [h*dv, (h+1)*dv)
  int64_t out_stride = 0;
};

// constexpr so that the CUDA kernels can call it on the device too.
constexpr int64_t GsaStateFloatsPerKvHead(int key_dim, int value_dim, int memory_rows) {
  return int64_t(key_dim) * memory_rows + int64_t(memory_rows) * value_dim;
}

inline int64_t GsaStateFloatsPerLayer(int kv_heads, int key_dim, int value_dim, int memory_rows) {
  return static_cast<int64_t>(kv_heads) * GsaStateFloatsPerKvHead(key_dim, value_dim, memory_rows);
}

// Prefill: the rows are consecutive tokens of target.slot's request, absorbed in order; the
// state left behind is the one after the last row. Step: row r is one token of the request in
// target.slots[r] (distinct slots); target.positions is not read (GSA has no positions).
template <Backend B>
void LaunchGsaPrefill(const GsaParams& params, const PrefillTarget& target, Stream stream);
template <Backend B>
void LaunchGsaStep(const GsaParams& params, const StepTarget& target, Stream stream);

inline void LaunchGsaPrefill(Backend backend, const GsaParams& params, const PrefillTarget& target,
                             Stream stream = nullptr) {
  Dispatch(backend, "gsa_prefill",
           [&](auto tag) { LaunchGsaPrefill<decltype(tag)::value>(params, target, stream); });
}
inline void LaunchGsaStep(Backend backend, const GsaParams& params, const StepTarget& target,
                          Stream stream = nullptr) {
  Dispatch(backend, "gsa_step",
           [&](auto tag) { LaunchGsaStep<decltype(tag)::value>(params, target, stream); });
}

}  // namespace slotserve::kernels
