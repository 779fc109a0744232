// Reference linear: y = x W^T + b (+ y), one double-precision dot product per output.
#include "kernels/linear.h"
#include "kernels/reference/host_access.h"

namespace slotserve::kernels {

template <>
void LaunchLinear<Backend::kReference>(const LinearParams& p, Stream /*stream*/) {
  for (int r = 0; r < p.rows; ++r) {
    const float* x = p.x + r * p.x_stride;
    float* y = p.y + r * p.y_stride;
    for (int o = 0; o < p.out_features; ++o) {
      double sum = p.bias != nullptr ? p.bias[o] : 0.0;
      const int64_t row_start = static_cast<int64_t>(o) * p.in_features;
      for (int i = 0; i < p.in_features; ++i) {
        sum +=
            static_cast<double>(x[i]) * host::LoadAsFloat(p.weight, p.weight_dtype, row_start + i);
      }
      if (p.accumulate) sum += y[o];
      y[o] = static_cast<float>(sum);
    }
  }
}

}  // namespace slotserve::kernels
