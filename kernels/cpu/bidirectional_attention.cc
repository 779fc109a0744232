// cpu unmasked attention over one sequence: per head, scores = Q Kᵀ (one sgemm), softmax row
// by row, out = P V (a second sgemm).
#include "kernels/bidirectional_attention.h"

#include <cblas.h>

#include <cmath>
#include <vector>

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
  std::vector<float> scores(static_cast<size_t>(n) * n);
  for (int h = 0; h < p.heads; ++h) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, d, scale, p.q + h * d, ld_in,
                p.k + h * d, ld_in, 0.0f, scores.data(), n);
    for (int r = 0; r < n; ++r) cpu::SoftmaxInPlace(scores.data() + static_cast<int64_t>(r) * n, n);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, d, n, 1.0f, scores.data(), n,
                p.v + h * d, ld_in, 0.0f, p.out + h * d, static_cast<int>(p.out_stride));
  }
}

}  // namespace slotserve::kernels
