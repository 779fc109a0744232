// Reference RMS norm: every value, the mean of squares and the gate in double.
#include <cmath>
#include <vector>

#include "kernels/rms_norm.h"

namespace slotserve::kernels {
namespace {

double Silu(double x) { return x / (1.0 + std::exp(-x)); }

}  // namespace

template <>
void LaunchRmsNorm<Backend::kReference>(const RmsNormParams& p, Stream /*stream*/) {
  const int cols = p.groups * p.group_dim;
  std::vector<double> u(cols);
  for (int r = 0; r < p.rows; ++r) {
    // Copy first: y may alias x.
    const float* x = p.x + r * p.x_stride;
    for (int c = 0; c < cols; ++c) u[c] = p.silu_input ? Silu(x[c]) : x[c];
    float* y = p.y + r * p.y_stride;
    const float* gate = p.gate != nullptr ? p.gate + r * p.gate_stride : nullptr;
    for (int g = 0; g < p.groups; ++g) {
      const int first = g * p.group_dim;
      double squares = 0.0;
      for (int i = 0; i < p.group_dim; ++i) squares += u[first + i] * u[first + i];
      const double inv_rms = 1.0 / std::sqrt(squares / p.group_dim + static_cast<double>(p.eps));
      for (int i = 0; i < p.group_dim; ++i) {
        const int c = first + i;
        double value = u[c] * inv_rms;
        if (p.weight != nullptr) value *= p.weight[i];
        if (gate != nullptr) value *= Silu(gate[c]);
        y[c] = static_cast<float>(value);
      }
    }
  }
}

}  // namespace slotserve::kernels
