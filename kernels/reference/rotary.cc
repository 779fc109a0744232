// Reference rotary embedding (GPT-NeoX halves): frequency, angle, sin/cos and the rotation all
// in double.
#include <cmath>

#include "kernels/rotary.h"

namespace slotserve::kernels {

template <>
void LaunchRotary<Backend::kReference>(const RotaryParams& p, Stream /*stream*/) {
  const int half = p.head_dim / 2;
  for (int r = 0; r < p.rows; ++r) {
    float* row = p.x + r * p.stride;
    for (int i = 0; i < half; ++i) {
      const double theta = std::pow(static_cast<double>(p.base), -2.0 * i / p.head_dim);
      const double angle = static_cast<double>(p.positions[r]) * theta;
      const double cosine = std::cos(angle), sine = std::sin(angle);
      for (int h = 0; h < p.heads; ++h) {
        float* x = row + static_cast<int64_t>(h) * p.head_dim;
        const double first = x[i], second = x[i + half];
        x[i] = static_cast<float>(first * cosine - second * sine);
        x[i + half] = static_cast<float>(second * cosine + first * sine);
      }
    }
  }
}

}  // namespace slotserve::kernels
