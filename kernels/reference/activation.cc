// Reference activations in double: exact-erf GELU and ReLU.
#include <cmath>

#include "kernels/activation.h"

namespace slotserve::kernels {

template <>
void LaunchActivation<Backend::kReference>(const ActivationParams& p, Stream /*stream*/) {
  for (int r = 0; r < p.rows; ++r) {
    float* x = p.x + r * p.stride;
    for (int c = 0; c < p.cols; ++c) {
      const double u = x[c];
      switch (p.activation) {
        case Activation::kGelu:
          x[c] = static_cast<float>(0.5 * u * (1.0 + std::erf(u / std::sqrt(2.0))));
          break;
        case Activation::kRelu:
          x[c] = u > 0.0 ? x[c] : 0.0f;
          break;
      }
    }
  }
}

}  // namespace slotserve::kernels
