// The reference kernels' softmax: in place, in double, shifted by the maximum.
#pragma once

#include <algorithm>
#include <cmath>

namespace slotserve::kernels::host {

// scores[0..n) <- exp(scores - max) / sum(exp(scores - max)); n >= 1.
inline void SoftmaxInPlace(double* scores, int n) {
  const double max_score = *std::max_element(scores, scores + n);
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    scores[i] = std::exp(scores[i] - max_score);
    sum += scores[i];
  }
  for (int i = 0; i < n; ++i) scores[i] /= sum;
}

}  // namespace slotserve::kernels::host
