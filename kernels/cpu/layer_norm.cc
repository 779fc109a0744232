// cpu layer norm: two passes per row (mean, then centred sum of squares), float storage with
// a double mean so long rows do not drift; rows split between the compute threads.
#include <cmath>
#include <vector>

#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/vector_ops.h"
#include "kernels/layer_norm.h"

namespace slotserve::kernels {

template <>
void LaunchLayerNorm<Backend::kCpu>(const LayerNormParams& p, Stream /*stream*/) {
  // The double mean is one dependent add per value (~4 cycles, as long as ~64 multiply-adds on
  // 256-bit FMAs); with the other passes ~32 per value is conservative. (At 4 per value a batch-8
  // norm, ~4 µs, stayed on the calling thread while the others waited.)
  const int64_t work = static_cast<int64_t>(p.rows) * p.dim * 32;
  cpu::ParallelFor(p.rows, work, [&](int begin, int end) {
    std::vector<float> centred(p.dim);
    for (int r = begin; r < end; ++r) {
      const float* x = p.x + r * p.x_stride;
      double sum = 0.0;
      for (int i = 0; i < p.dim; ++i) sum += x[i];
      const float mean = static_cast<float>(sum / p.dim);
      for (int i = 0; i < p.dim; ++i) centred[i] = x[i] - mean;
      const float variance = cpu::Dot(centred.data(), centred.data(), p.dim) / p.dim;
      const float inv_std = 1.0f / std::sqrt(variance + p.eps);
      float* y = p.y + r * p.y_stride;  // may alias x: x is no longer read
      for (int i = 0; i < p.dim; ++i) y[i] = centred[i] * inv_std * p.gamma[i] + p.beta[i];
    }
  });
}

}  // namespace slotserve::kernels
