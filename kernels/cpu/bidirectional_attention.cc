// cpu unmasked attention over one sequence: per head, scores = Q Kᵀ (one sgemm), softmax row
// by row, out = P V (a second sgemm). Heads are independent and split between the compute
// threads (parallel_for.h), each part with its own scores.
#include "kernels/bidirectional_attention.h"

#include <cblas.h>

#include <cmath>
#include <vector>

#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/vector_ops.h"

namespace slotserve::kernels {

template <>
void LaunchBidirectionalAttention<Backend::kCpu>(const BidirectionalAttentionParams& p,
                                                 Stream /*stream*/) {
  if (p.rows == 0) return;
  const int d = p.head_dim;
  const int n = p.rows;
  const int ld_in = static_cast<int>(p.in_stride);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const int64_t work = int64_t{4} * n * n * d * p.heads;
  cpu::ParallelFor(p.heads, work, [&](int begin, int end) {
    std::vector<float> scores(static_cast<size_t>(n) * n);
    for (int h = begin; h < end; ++h) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, d, scale, p.q + h * d, ld_in,
                  p.k + h * d, ld_in, 0.0f, scores.data(), n);
      for (int r = 0; r < n; ++r)
        cpu::SoftmaxInPlace(scores.data() + static_cast<int64_t>(r) * n, n);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, d, n, 1.0f, scores.data(), n,
                  p.v + h * d, ld_in, 0.0f, p.out + h * d, static_cast<int>(p.out_stride));
    }
  });
}

}  // namespace slotserve::kernels
