#include "engine/token_logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace slotserve::engine {
namespace {

bool InRange(int32_t id, size_t size) { return id >= 0 && static_cast<size_t>(id) < size; }

// log(sum(exp(logit))) over the finite logits, shifted by their max so nothing overflows.
double LogNormaliser(std::span<const float> raw_logits) {
  double max_logit = -std::numeric_limits<double>::infinity();
  for (float logit : raw_logits) {
    if (std::isfinite(logit)) max_logit = std::max(max_logit, static_cast<double>(logit));
  }
  double sum = 0.0;
  for (float logit : raw_logits) {
    if (std::isfinite(logit)) sum += std::exp(logit - max_logit);
  }
  return max_logit + std::log(sum);
}

}  // namespace

GeneratedTokenLogprobs ComputeLogprobs(std::span<const float> raw_logits, int32_t chosen,
                                       int top_n) {
  GeneratedTokenLogprobs result;
  const double log_normaliser = LogNormaliser(raw_logits);
  auto logprob = [&](int32_t id) -> float {
    if (!InRange(id, raw_logits.size()) || !std::isfinite(raw_logits[id])) {
      return -std::numeric_limits<float>::infinity();
    }
    return static_cast<float>(raw_logits[id] - log_normaliser);
  };
  result.chosen = {chosen, logprob(chosen)};
  const size_t n = std::min<size_t>(std::max(top_n, 0), raw_logits.size());
  if (n > 0) {
    std::vector<int32_t> ids(raw_logits.size());
    for (size_t id = 0; id < ids.size(); ++id) ids[id] = static_cast<int32_t>(id);
    auto more_likely = [&](int32_t a, int32_t b) {
      const float la = std::isnan(raw_logits[a]) ? -INFINITY : raw_logits[a];
      const float lb = std::isnan(raw_logits[b]) ? -INFINITY : raw_logits[b];
      return la > lb || (la == lb && a < b);
    };
    std::partial_sort(ids.begin(), ids.begin() + n, ids.end(), more_likely);
    result.top.reserve(n);
    for (size_t i = 0; i < n; ++i) result.top.push_back({ids[i], logprob(ids[i])});
  }
  return result;
}

void LogSoftmax(std::span<const float> raw_logits, std::span<double> out) {
  const double log_normaliser = LogNormaliser(raw_logits);
  for (size_t i = 0; i < raw_logits.size(); ++i) {
    out[i] = std::isfinite(raw_logits[i]) ? raw_logits[i] - log_normaliser
                                          : -std::numeric_limits<double>::infinity();
  }
}

}  // namespace slotserve::engine
