// The cpu kernels' random feature map φ (docs/MODEL_FORMAT.md "The attention kinds"): shared by the
// RFA self-attention and the RFA cross attention's read.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/cpu/vector_ops.h"
#include "kernels/rfa_attention.h"

namespace slotserve::kernels::cpu {

// Head h's rows of W~ = rfa_random * rfa_sigma, [D x d].
inline const float* HeadProjection(const RfaParams& p, int h) {
  return p.projection + static_cast<int64_t>(h) * p.features * p.head_dim;
}

// phi = feature_scale * [sin, cos](angles / (|u| + norm_eps)), in the configured order.
inline void FeaturesFromAngles(const RfaParams& p, const float* angles, const float* u,
                               float* phi) {
  const float norm = std::sqrt(Dot(u, u, p.head_dim));
  const float inv = 1.0f / (norm + p.norm_eps);
  const int features = p.features;
  for (int f = 0; f < features; ++f) {
    const float angle = angles[f] * inv;
    const float s = p.feature_scale * std::sin(angle);
    const float c = p.feature_scale * std::cos(angle);
    if (p.interleave) {
      phi[2 * f] = s;
      phi[2 * f + 1] = c;
    } else {
      phi[f] = s;
      phi[features + f] = c;
    }
  }
}

}  // namespace slotserve::kernels::cpu
