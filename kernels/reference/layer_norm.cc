// Reference layer norm: mean and biased variance in double, two passes.
#include <cmath>
#include <vector>

#include "kernels/layer_norm.h"

namespace slotserve::kernels {

template <>
void LaunchLayerNorm<Backend::kReference>(const LayerNormParams& p, Stream /*stream*/) {
  std::vector<double> row(p.dim);
  for (int r = 0; r < p.rows; ++r) {
    const float* x = p.x + r * p.x_stride;
    // Copy first: y may alias x.
    double mean = 0.0;
    for (int i = 0; i < p.dim; ++i) {
      row[i] = x[i];
      mean += row[i];
    }
    mean /= p.dim;
    double variance = 0.0;
    for (int i = 0; i < p.dim; ++i) variance += (row[i] - mean) * (row[i] - mean);
    variance /= p.dim;
    const double inv_std = 1.0 / std::sqrt(variance + static_cast<double>(p.eps));
    float* y = p.y + r * p.y_stride;
    for (int i = 0; i < p.dim; ++i) {
      y[i] = static_cast<float>((row[i] - mean) * inv_std * p.gamma[i] + p.beta[i]);
    }
  }
}

}  // namespace slotserve::kernels
