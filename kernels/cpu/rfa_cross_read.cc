// cpu RFA cross read (kernels/rfa_cross_read.h): per request and head, φ(q) from D dot
// products, then the denominator and the numerator as vector operations over the memory.
#include "kernels/rfa_cross_read.h"

#include <algorithm>
#include <vector>

#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/random_features.h"
#include "kernels/cpu/row_products.h"
#include "kernels/cpu/vector_ops.h"
#include "kernels/reference/host_access.h"

namespace slotserve::kernels {

template <>
void LaunchRfaCrossRead<Backend::kCpu>(const RfaParams& p, const StepTarget& target,
                                       Stream /*stream*/) {
  const int d = p.head_dim;
  const int features = p.features;
  const int width = 2 * features;
  const int64_t head_floats = static_cast<int64_t>(width) * d + width;
  // (row, head) pairs only read the memory: split between the compute threads (parallel_for.h).
  const int pairs = p.rows * p.heads;
  cpu::ParallelFor(pairs, int64_t{pairs} * features * 4 * d, [&](int begin, int end) {
    std::vector<float> angles(features), phi_q(width);
    for (int pair = begin; pair < end; ++pair) {
      const int r = pair / p.heads;
      const int h = pair % p.heads;
      const float* layer = host::LayerState(target.state, target.slots[r]);
      const float* sums = layer + h * head_floats;
      const float* z = sums + width * d;
      const float* q = p.q + r * p.in_stride + h * d;
      const float* projection = cpu::HeadProjection(p, h);
      cpu::DotRows(q, projection, d, features, d, angles.data());
      cpu::FeaturesFromAngles(p, angles.data(), q, phi_q.data());
      const float denominator = std::max(cpu::Dot(phi_q.data(), z, width), p.eps);
      for (int f = 0; f < width; ++f) phi_q[f] /= denominator;
      cpu::WeightedRowSum(phi_q.data(), sums, d, width, d, p.out + r * p.out_stride + h * d);
    }
  });
}

}  // namespace slotserve::kernels
