// The reference kernels' random feature map φ (docs/MODEL_FORMAT.md "The attention kinds"), in
// double: shared by the RFA self-attention and the RFA cross attention's read.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/rfa_attention.h"

namespace slotserve::kernels::host {

// phi(u) = feature_scale * [sin(W u^), cos(W u^)] for head h, in the configured feature order.
inline void RandomFeatures(const RfaParams& p, int h, const float* u, std::vector<double>& phi) {
  const int d = p.head_dim;
  const int features = p.features;
  double norm = 0.0;
  for (int i = 0; i < d; ++i) norm += static_cast<double>(u[i]) * u[i];
  const double inv = 1.0 / (std::sqrt(norm) + p.norm_eps);
  const float* projection = p.projection + static_cast<int64_t>(h) * features * d;
  for (int f = 0; f < features; ++f) {
    double angle = 0.0;
    for (int i = 0; i < d; ++i) angle += static_cast<double>(projection[f * d + i]) * u[i] * inv;
    const int sin_index = p.interleave ? 2 * f : f;
    const int cos_index = p.interleave ? 2 * f + 1 : features + f;
    phi[sin_index] = p.feature_scale * std::sin(angle);
    phi[cos_index] = p.feature_scale * std::cos(angle);
  }
}

}  // namespace slotserve::kernels::host
