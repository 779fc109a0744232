// Reference random feature attention (docs/MODEL_FORMAT.md "The attention kinds"): every token goes
// through the same scalar update-then-read of its request's state; arithmetic in double, state
// stored as float.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/reference/host_access.h"
#include "kernels/reference/random_features.h"
#include "kernels/rfa_attention.h"

namespace slotserve::kernels {
namespace {

void RfaToken(const RfaParams& p, int row, float* layer_state) {
  const int d = p.head_dim;
  const int width = 2 * p.features;
  const int64_t head_floats = static_cast<int64_t>(width) * d + width;
  std::vector<double> phi_k(width), phi_q(width);
  for (int h = 0; h < p.heads; ++h) {
    float* sums = layer_state + h * head_floats;  // S [2D x d]
    float* z = sums + width * d;                  // [2D]
    const float* q = p.q + row * p.in_stride + h * d;
    const float* k = p.k + row * p.in_stride + h * d;
    const float* v = p.v + row * p.in_stride + h * d;
    host::RandomFeatures(p, h, k, phi_k);
    host::RandomFeatures(p, h, q, phi_q);

    double keep = 1.0, add = 1.0;  // gate=false: plain running sums
    if (p.gate_logits != nullptr) {
      keep = 1.0 / (1.0 + std::exp(-static_cast<double>(p.gate_logits[row * p.in_stride + h])));
      add = 1.0 - keep;
    }
    for (int f = 0; f < width; ++f) {
      z[f] = static_cast<float>(keep * z[f] + add * phi_k[f]);
      for (int i = 0; i < d; ++i) {
        sums[f * d + i] = static_cast<float>(keep * sums[f * d + i] + add * phi_k[f] * v[i]);
      }
    }

    double denominator = 0.0;
    for (int f = 0; f < width; ++f) denominator += phi_q[f] * z[f];
    denominator = std::max(denominator, static_cast<double>(p.eps));
    float* out = p.out + row * p.out_stride + h * d;
    for (int i = 0; i < d; ++i) {
      double numerator = 0.0;
      for (int f = 0; f < width; ++f) numerator += phi_q[f] * sums[f * d + i];
      out[i] = static_cast<float>(numerator / denominator);
    }
  }
}

}  // namespace

template <>
void LaunchRfaPrefill<Backend::kReference>(const RfaParams& p, const PrefillTarget& target,
                                           Stream /*stream*/) {
  float* state = host::LayerState(target.state, target.slot);
  for (int r = 0; r < p.rows; ++r) RfaToken(p, r, state);
}

template <>
void LaunchRfaStep<Backend::kReference>(const RfaParams& p, const StepTarget& target,
                                        Stream /*stream*/) {
  for (int r = 0; r < p.rows; ++r) RfaToken(p, r, host::LayerState(target.state, target.slots[r]));
}

}  // namespace slotserve::kernels
