// cpu sinusoidal positions. The frequencies are computed once per call and the angles in
// double: p * f_j in float loses ~1e-4 of phase at positions in the thousands.
#include <cmath>
#include <vector>

#include "kernels/positions.h"

namespace slotserve::kernels {

template <>
void LaunchAddPositions<Backend::kCpu>(const AddPositionsParams& p, Stream /*stream*/) {
  const int half = p.dim / 2;
  std::vector<double> frequencies(half);
  for (int j = 0; j < half; ++j) frequencies[j] = std::exp(-j * std::log(10000.0) / (half - 1));
  for (int r = 0; r < p.rows; ++r) {
    float* x = p.x + r * p.stride;
    const double position = p.positions[r];
    for (int j = 0; j < half; ++j) {
      const double angle = position * frequencies[j];
      x[j] += static_cast<float>(std::sin(angle));
      x[half + j] += static_cast<float>(std::cos(angle));
    }
  }
}

}  // namespace slotserve::kernels
