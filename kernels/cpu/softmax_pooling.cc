// cpu softmax pooling (kernels/softmax_pooling.h): per head, the logits as an [M x k] matrix
// (one sgemm against the keys when formed from queries), softmax row by row, then the pooled
// keys and values as two sgemms [M x k] x [k x d].
#include "kernels/softmax_pooling.h"

#include <cblas.h>

#include <vector>

#include "kernels/cpu/vector_ops.h"

namespace slotserve::kernels {

template <>
void LaunchSoftmaxPooling<Backend::kCpu>(const SoftmaxPoolingParams& p, Stream /*stream*/) {
  const int d = p.head_dim;
  const int k = p.positions;
  const int m = p.memory_rows;
  const int width = p.heads * d;
  const int ld_in = static_cast<int>(p.in_stride);
  std::vector<float> weights(static_cast<size_t>(m) * k);
  for (int h = 0; h < p.heads; ++h) {
    if (p.queries != nullptr) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, k, d, p.logit_scale,
                  p.queries + h * d, width, p.keys + h * d, ld_in, 0.0f, weights.data(), k);
    } else {
      for (int j = 0; j < m; ++j) {
        for (int i = 0; i < k; ++i) {
          weights[static_cast<size_t>(j) * k + i] =
              p.logit_scale * p.logits[i * p.logits_stride + h * m + j];
        }
      }
    }
    for (int j = 0; j < m; ++j) cpu::SoftmaxInPlace(weights.data() + static_cast<size_t>(j) * k, k);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, d, k, 1.0f, weights.data(), k,
                p.keys + h * d, ld_in, 0.0f, p.out_keys + h * d, width);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, d, k, 1.0f, weights.data(), k,
                p.values + h * d, ld_in, 0.0f, p.out_values + h * d, width);
  }
}

}  // namespace slotserve::kernels
