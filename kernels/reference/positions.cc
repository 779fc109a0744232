// Reference sinusoidal positions (fairseq layout), angles computed in double.
#include <cmath>

#include "kernels/positions.h"

namespace slotserve::kernels {

template <>
void LaunchAddPositions<Backend::kReference>(const AddPositionsParams& p, Stream /*stream*/) {
  const int half = p.dim / 2;
  for (int r = 0; r < p.rows; ++r) {
    float* x = p.x + r * p.stride;
    const double position = p.positions[r];
    for (int j = 0; j < half; ++j) {
      const double frequency = std::exp(-j * std::log(10000.0) / (half - 1));
      x[j] = static_cast<float>(x[j] + std::sin(position * frequency));
      x[half + j] = static_cast<float>(x[half + j] + std::cos(position * frequency));
    }
  }
}

}  // namespace slotserve::kernels
