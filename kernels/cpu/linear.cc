// cpu linear: one OpenBLAS sgemm (y = x W^T, beta = 1 when accumulating), then the bias.
// F32 weights only: host backends upcast F16/BF16 weights once at load.
#include <cblas.h>

#include <cstdio>
#include <cstdlib>

#include "kernels/linear.h"

namespace slotserve::kernels {

template <>
void LaunchLinear<Backend::kCpu>(const LinearParams& p, Stream /*stream*/) {
  if (p.weight_dtype != DType::kF32) {
    std::fprintf(stderr,
                 "slotserve: cpu linear got %s weights [%d x %d]; the cpu backend expects F32 "
                 "weights (the model must upcast F16/BF16 weights at load)\n",
                 DTypeName(p.weight_dtype), p.out_features, p.in_features);
    std::abort();
  }
  if (p.rows == 0 || p.out_features == 0) return;
  if (p.in_features > 0) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, p.rows, p.out_features, p.in_features,
                1.0f, p.x, static_cast<int>(p.x_stride), static_cast<const float*>(p.weight),
                p.in_features, p.accumulate ? 1.0f : 0.0f, p.y, static_cast<int>(p.y_stride));
  } else if (!p.accumulate) {
    for (int r = 0; r < p.rows; ++r) {
      for (int o = 0; o < p.out_features; ++o) p.y[r * p.y_stride + o] = 0.0f;
    }
  }
  if (p.bias == nullptr) return;
  for (int r = 0; r < p.rows; ++r) {
    float* y = p.y + r * p.y_stride;
    for (int o = 0; o < p.out_features; ++o) y[o] += p.bias[o];
  }
}

}  // namespace slotserve::kernels
