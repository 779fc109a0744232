// The reference kernels' softmax attention of one query over n key/value rows, in double:
// out = softmax(q Kᵀ / sqrt(d)) V. Shared by the cross-attention memory and the encoder.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/reference/softmax_in_double.h"

namespace slotserve::kernels::host {

// keys/values: row s at keys + s*row_stride (d floats each); n >= 1.
inline void AttendRowsInDouble(const float* q, const float* keys, const float* values,
                               int64_t row_stride, int n, int d, float* out) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> scores(n);
  for (int s = 0; s < n; ++s) {
    double dot = 0.0;
    for (int i = 0; i < d; ++i) dot += static_cast<double>(q[i]) * keys[s * row_stride + i];
    scores[s] = dot * scale;
  }
  SoftmaxInPlace(scores.data(), n);
  for (int i = 0; i < d; ++i) {
    double sum = 0.0;
    for (int s = 0; s < n; ++s) sum += scores[s] * values[s * row_stride + i];
    out[i] = static_cast<float>(sum);
  }
}

}  // namespace slotserve::kernels::host
