// cpu rotary embedding. The frequencies are computed once per call, each row's angles and
// their sin/cos in double once per frequency (reused by every head), and the rotation in float.
#include <cmath>
#include <vector>

#include "kernels/cpu/parallel_for.h"
#include "kernels/rotary.h"

namespace slotserve::kernels {

template <>
void LaunchRotary<Backend::kCpu>(const RotaryParams& p, Stream /*stream*/) {
  const int half = p.head_dim / 2;
  std::vector<double> theta(half);
  for (int i = 0; i < half; ++i) {
    theta[i] = std::pow(static_cast<double>(p.base), -2.0 * i / p.head_dim);
  }
  // A double sin + cos costs about forty multiply-adds; the rotation four per value pair.
  const int64_t work = static_cast<int64_t>(p.rows) * (half * 40 + p.heads * p.head_dim * 2);
  cpu::ParallelFor(p.rows, work, [&](int begin, int end) {
    std::vector<float> cosine(half), sine(half);
    for (int r = begin; r < end; ++r) {
      const double position = p.positions[r];
      for (int i = 0; i < half; ++i) {
        const double angle = position * theta[i];
        cosine[i] = static_cast<float>(std::cos(angle));
        sine[i] = static_cast<float>(std::sin(angle));
      }
      float* row = p.x + r * p.stride;
      for (int h = 0; h < p.heads; ++h) {
        float* __restrict first = row + static_cast<int64_t>(h) * p.head_dim;
        float* __restrict second = first + half;  // the two halves never overlap
        for (int i = 0; i < half; ++i) {
          const float a = first[i], b = second[i];
          first[i] = a * cosine[i] - b * sine[i];
          second[i] = b * cosine[i] + a * sine[i];
        }
      }
    }
  });
}

}  // namespace slotserve::kernels
