// What the perplexity tools sum per scored token.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>

namespace slotserve::models {

// -log softmax(row)[target], in double.
inline double NegativeLogLikelihood(std::span<const float> row, int32_t target) {
  const float max_logit = *std::max_element(row.begin(), row.end());
  double sum = 0.0;
  for (const float logit : row) sum += std::exp(static_cast<double>(logit) - max_logit);
  return std::log(sum) + max_logit - static_cast<double>(row[target]);
}

}  // namespace slotserve::models
