// cpu linear: y = x W^T (beta = 1 when accumulating), then the bias (linear_bias.h: each
// thread adds it to the outputs it computed). F32 weights go through
// OpenBLAS; F16/BF16/I8 weights stay narrow and go through narrow_weight_linear.h, or, for I8
// with int8 activations, int8_activations_linear.h.
//
// Up to four rows (decode batches of 1-4; Step pads 3 to 4) of F32 weights go through
// cblas_sgemv per row: OpenBLAS's sgemm re-packs the whole weight matrix into its panel format
// on every call, and at a few rows that copy costs more than the product (the 4000x256 LM head:
// 4.1 GFLOP/s as sgemm, 12.6 as sgemv on the bench machine). Measured side by side
// (docs/PERFORMANCE.md), per-row sgemv makes a batch-1 step ~27% and a batch-2..4 step 25-50%
// faster; at 6-8 rows sgemm wins.
#include <cblas.h>

#include "kernels/cpu/int8_activations_linear.h"
#include "kernels/cpu/linear_bias.h"
#include "kernels/cpu/narrow_weight_linear.h"
#include "kernels/cpu/parallel_for.h"
#include "kernels/linear.h"

namespace slotserve::kernels {
namespace {

constexpr int kMaxSgemvRows = 4;

}  // namespace

template <>
void LaunchLinear<Backend::kCpu>(const LinearParams& p, Stream /*stream*/) {
  if (p.rows == 0 || p.out_features == 0) return;
  const float beta = p.accumulate ? 1.0f : 0.0f;
  const auto* weight = static_cast<const float*>(p.weight);
  if (p.in_features > 0 && p.weight_dtype == DType::kI8 && p.int8_activations) {
    cpu::Int8ActivationsLinear(p);
  } else if (p.in_features > 0 && p.weight_dtype != DType::kF32) {
    cpu::NarrowWeightLinear(p);
  } else if (p.in_features > 0) {
    // Output features split between the compute threads (parallel_for.h), each range through
    // OpenBLAS on its slice of W (single-threaded inside a part: base/compute_threads.h).
    const int64_t work = static_cast<int64_t>(p.rows) * p.in_features * p.out_features;
    cpu::ParallelFor(
        p.out_features, work,
        [&](int begin, int end) {
          const float* w = weight + static_cast<int64_t>(begin) * p.in_features;
          const int count = end - begin;
          if (p.rows <= kMaxSgemvRows) {
            for (int r = 0; r < p.rows; ++r) {
              cblas_sgemv(CblasRowMajor, CblasNoTrans, count, p.in_features, 1.0f, w, p.in_features,
                          p.x + r * p.x_stride, 1, beta, p.y + r * p.y_stride + begin, 1);
            }
          } else {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, p.rows, count, p.in_features, 1.0f,
                        p.x, static_cast<int>(p.x_stride), w, p.in_features, beta, p.y + begin,
                        static_cast<int>(p.y_stride));
          }
          cpu::AddBias(p, begin, end);
        },
        /*grain=*/16);
  } else {  // no inputs: y = 0 (or y) + bias
    if (!p.accumulate) {
      for (int r = 0; r < p.rows; ++r) {
        for (int o = 0; o < p.out_features; ++o) p.y[r * p.y_stride + o] = 0.0f;
      }
    }
    cpu::AddBias(p, 0, p.out_features);
  }
}

}  // namespace slotserve::kernels
