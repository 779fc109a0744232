// cpu activations: exact-erf GELU and ReLU, element-wise in float.
#include <cmath>

#include "kernels/activation.h"

namespace slotserve::kernels {

template <>
void LaunchActivation<Backend::kCpu>(const ActivationParams& p, Stream /*stream*/) {
  constexpr float kInvSqrt2 = 0.70710678118654752440f;
  for (int r = 0; r < p.rows; ++r) {
    float* x = p.x + r * p.stride;
    switch (p.activation) {
      case Activation::kGelu:
        for (int c = 0; c < p.cols; ++c) x[c] = 0.5f * x[c] * (1.0f + std::erf(x[c] * kInvSqrt2));
        break;
      case Activation::kRelu:
        for (int c = 0; c < p.cols; ++c) x[c] = x[c] > 0.0f ? x[c] : 0.0f;
        break;
    }
  }
}

}  // namespace slotserve::kernels
