// Reference SwiGLU in double: silu(gate) * up.
#include <cmath>

#include "kernels/swiglu.h"

namespace slotserve::kernels {

template <>
void LaunchSwiGlu<Backend::kReference>(const SwiGluParams& p, Stream /*stream*/) {
  for (int r = 0; r < p.rows; ++r) {
    const float* gate = p.gate + r * p.in_stride;
    const float* up = p.up + r * p.in_stride;
    float* out = p.out + r * p.out_stride;  // may alias gate: each element is read, then written
    for (int c = 0; c < p.cols; ++c) {
      const double g = gate[c];
      out[c] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[c]);
    }
  }
}

}  // namespace slotserve::kernels
