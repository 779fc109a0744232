// Reference RFA cross read (kernels/rfa_cross_read.h), in double.
#include "kernels/rfa_cross_read.h"

#include <algorithm>
#include <vector>

#include "kernels/reference/host_access.h"
#include "kernels/reference/random_features.h"

namespace slotserve::kernels {

template <>
void LaunchRfaCrossRead<Backend::kReference>(const RfaParams& p, const StepTarget& target,
                                             Stream /*stream*/) {
  const int d = p.head_dim;
  const int width = 2 * p.features;
  const int64_t head_floats = static_cast<int64_t>(width) * d + width;
  std::vector<double> phi_q(width);
  for (int r = 0; r < p.rows; ++r) {
    const float* layer = host::LayerState(target.state, target.slots[r]);
    for (int h = 0; h < p.heads; ++h) {
      const float* sums = layer + h * head_floats;
      const float* z = sums + width * d;
      host::RandomFeatures(p, h, p.q + r * p.in_stride + h * d, phi_q);
      double denominator = 0.0;
      for (int f = 0; f < width; ++f) denominator += phi_q[f] * z[f];
      denominator = std::max(denominator, static_cast<double>(p.eps));
      for (int i = 0; i < d; ++i) {
        double numerator = 0.0;
        for (int f = 0; f < width; ++f) numerator += phi_q[f] * sums[f * d + i];
        p.out[r * p.out_stride + h * d + i] = static_cast<float>(numerator / denominator);
      }
    }
  }
}

}  // namespace slotserve::kernels
