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
      const int64_t row_start = static_cast<int64_t>(o) * p.in_features;
      const double row_scale = host::RowScale(p.weight_scale, p.weight_dtype, o);
      double sum = 0.0;
      for (int i = 0; i < p.in_features; ++i) {
        sum += static_cast<double>(x[i]) *
               (host::LoadAsFloat(p.weight, p.weight_dtype, row_start + i) * row_scale);
      }
      if (p.bias != nullptr) sum += p.bias[o];
      if (p.accumulate) sum += y[o];
      y[o] = static_cast<float>(sum);
    }
  }
}

}  // namespace slotserve::kernels
