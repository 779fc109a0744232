// Reference softmax pooling of rows into memory rows (kernels/softmax_pooling.h), in double.
#include "kernels/softmax_pooling.h"

#include <vector>

#include "kernels/reference/softmax_in_double.h"

namespace slotserve::kernels {

template <>
void LaunchSoftmaxPooling<Backend::kReference>(const SoftmaxPoolingParams& p, Stream /*stream*/) {
  const int d = p.head_dim;
  const int64_t width = static_cast<int64_t>(p.heads) * d;
  std::vector<double> weights(p.positions);
  for (int h = 0; h < p.heads; ++h) {
    for (int j = 0; j < p.memory_rows; ++j) {
      for (int i = 0; i < p.positions; ++i) {
        double logit = 0.0;
        if (p.queries != nullptr) {
          for (int c = 0; c < d; ++c) {
            logit += static_cast<double>(p.queries[j * width + h * d + c]) *
                     p.keys[i * p.in_stride + h * d + c];
          }
        } else {
          logit = p.logits[i * p.logits_stride + h * p.memory_rows + j];
        }
        weights[i] = logit * p.logit_scale;
      }
      host::SoftmaxInPlace(weights.data(), p.positions);
      for (int c = 0; c < d; ++c) {
        double key = 0.0;
        double value = 0.0;
        for (int i = 0; i < p.positions; ++i) {
          key += weights[i] * p.keys[i * p.in_stride + h * d + c];
          value += weights[i] * p.values[i * p.in_stride + h * d + c];
        }
        p.out_keys[j * width + h * d + c] = static_cast<float>(key);
        p.out_values[j * width + h * d + c] = static_cast<float>(value);
      }
    }
  }
}

}  // namespace slotserve::kernels
