// cpu linear: y = x W^T (beta = 1 when accumulating), then the bias (linear_bias.h: each
// thread adds it to the outputs it computed). F16/BF16/I8 weights stay narrow and go through
// narrow_weight_linear.h, or, for I8 with int8 activations, int8_activations_linear.h.
//
// F32 weights: up to kMaxRowsOwnF32Kernels rows through narrow_weight_linear.h like the narrow
// dtypes (its fused GEMV, which reads each weight row once per block of up to eight input rows,
// then its transposed-input GEMM straight over the weight rows); more rows through OpenBLAS's
// sgemm. Until 2026-11-28 a batch of 1-4 rows called cblas_sgemv once per row (each row reading
// every weight again: a batch-4 step decoded fewer tokens/s than a batch-2 one) and more rows
// called sgemm, which re-packs the whole weight matrix on every call (docs/CPU_SPEED_LOG.md,
// "F32 weights through our own kernels").
#include <cblas.h>

#include "kernels/cpu/int8_activations_linear.h"
#include "kernels/cpu/linear_bias.h"
#include "kernels/cpu/narrow_weight_linear.h"
#include "kernels/cpu/parallel_for.h"
#include "kernels/linear.h"

namespace slotserve::kernels {
namespace {

// Rows of F32 weights up to which our kernels beat OpenBLAS. Measured side by side on the
// bundled shapes (bench/results/f32_own_kernels.md), decode steps against the sgemv/sgemm
// routing before: x1.21-2.76 at 1-16 rows, x1.11-1.33 at 32-64, x1.00-1.16 at 128 (1 and 2
// threads); our tiles against sgemm at 256 rows: x0.94-1.04, where its packing pays for itself.
constexpr int kMaxRowsOwnF32Kernels = 128;

}  // namespace

template <>
void LaunchLinear<Backend::kCpu>(const LinearParams& p, Stream /*stream*/) {
  if (p.rows == 0 || p.out_features == 0) return;
  const float beta = p.accumulate ? 1.0f : 0.0f;
  const auto* weight = static_cast<const float*>(p.weight);
  if (p.in_features > 0 && p.weight_dtype == DType::kI8 && p.int8_activations) {
    cpu::Int8ActivationsLinear(p);
  } else if (p.in_features > 0 &&
             (p.weight_dtype != DType::kF32 || p.rows <= kMaxRowsOwnF32Kernels)) {
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
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, p.rows, count, p.in_features, 1.0f,
                      p.x, static_cast<int>(p.x_stride), w, p.in_features, beta, p.y + begin,
                      static_cast<int>(p.y_stride));
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
