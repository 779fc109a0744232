// Reference causal Luna (docs/MODEL_FORMAT.md "The attention kinds"): every token goes through the
// same scalar update-then-read of its request's state; arithmetic in double, state stored as float.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/luna_attention.h"
#include "kernels/reference/host_access.h"
#include "kernels/reference/softmax_in_double.h"

namespace slotserve::kernels {
namespace {

double LunaActivate(LunaActivation activation, double u) {
  switch (activation) {
    case LunaActivation::kSoftplus: {
      // (1/beta) log(1 + exp(beta u)) with beta = ln 2, written to not overflow for large u.
      const double beta = std::log(2.0);
      const double bu = beta * u;
      return (std::max(bu, 0.0) + std::log1p(std::exp(-std::abs(bu)))) / beta;
    }
    case LunaActivation::kElu1:
      return u > 0.0 ? u + 1.0 : std::exp(u);
  }
  return 0.0;
}

// `position` is the token's index in its request; t = position + 1 tokens are absorbed after it.
void LunaToken(const LunaParams& p, int row, int32_t position, float* layer_state) {
  const int d = p.head_dim;
  const int length = p.length;
  const int64_t head_floats = 2LL * d * length;
  const int64_t pq_stride = static_cast<int64_t>(p.heads) * d;
  const double t = static_cast<double>(position) + 1.0;
  const double q_scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> weights(length), attention(length);
  for (int h = 0; h < p.heads; ++h) {
    float* a_state = layer_state + h * head_floats;  // A [d x L]
    float* c_state = a_state + d * length;           // C [L x d]
    const float* q = p.q + row * p.in_stride + h * d;
    const float* k = p.k + row * p.in_stride + h * d;
    const float* v = p.v + row * p.in_stride + h * d;
    const float* pc = p.pc + row * p.in_stride + h * d;

    for (int l = 0; l < length; ++l) {
      const float* pq = p.pq + l * pq_stride + h * d;
      double dot = 0.0;
      for (int i = 0; i < d; ++i) dot += static_cast<double>(pc[i]) * pq[i];
      weights[l] = LunaActivate(p.activation, dot);
    }
    for (int i = 0; i < d; ++i) {
      for (int l = 0; l < length; ++l) {
        a_state[i * length + l] = static_cast<float>(a_state[i * length + l] + k[i] * weights[l]);
        c_state[l * d + i] = static_cast<float>(c_state[l * d + i] + weights[l] * v[i]);
      }
    }

    for (int l = 0; l < length; ++l) {
      double dot = 0.0;
      for (int i = 0; i < d; ++i) dot += q[i] * q_scale * a_state[i * length + l];
      attention[l] = dot / t;
    }
    host::SoftmaxInPlace(attention.data(), length);
    float* out = p.out + row * p.out_stride + h * d;
    for (int i = 0; i < d; ++i) {
      double sum = 0.0;
      for (int l = 0; l < length; ++l) sum += attention[l] * c_state[l * d + i];
      out[i] = static_cast<float>(sum / t);
    }
  }
}

}  // namespace

template <>
void LaunchLunaPrefill<Backend::kReference>(const LunaParams& p, const PrefillTarget& target,
                                            Stream /*stream*/) {
  float* state = host::LayerState(target.state, target.slot);
  for (int r = 0; r < p.rows; ++r) LunaToken(p, r, target.start_position + r, state);
}

template <>
void LaunchLunaStep<Backend::kReference>(const LunaParams& p, const StepTarget& target,
                                         Stream /*stream*/) {
  for (int r = 0; r < p.rows; ++r) {
    LunaToken(p, r, target.positions[r], host::LayerState(target.state, target.slots[r]));
  }
}

}  // namespace slotserve::kernels
