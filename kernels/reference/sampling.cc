// Reference token selection (kernels/sampling.h), written as the header reads: adjust the row,
// sort the candidates into rank order, cut by top_k, top_p and min_p, then walk ids upwards.
// Weights in double.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/counter_rng.h"
#include "kernels/reference/logit_adjustments.h"
#include "kernels/sampling.h"

namespace slotserve::kernels {
namespace {

int32_t ArgMax(const float* logits, int vocab) {
  int32_t best = 0;
  float best_value = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < vocab; ++i) {
    const float value = std::isnan(logits[i]) ? -std::numeric_limits<float>::infinity() : logits[i];
    if (value > best_value) {
      best_value = value;
      best = i;
    }
  }
  return best;
}

int32_t SampleRow(const SamplingParams& p, int row) {
  const float* logits = p.logits + row * p.logits_stride;
  const float temperature = p.temperature[row];
  if (temperature <= 0.0f) return ArgMax(logits, p.vocab);

  std::vector<int32_t> ranked;
  float max_logit = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < p.vocab; ++i) {
    if (!std::isfinite(logits[i])) continue;
    ranked.push_back(i);
    max_logit = std::max(max_logit, logits[i]);
  }
  if (ranked.empty()) return ArgMax(logits, p.vocab);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  auto weight = [&](int32_t id) {
    return std::exp((static_cast<double>(logits[id]) - max_logit) / temperature);
  };

  std::size_t kept = ranked.size();
  const int32_t top_k = p.top_k != nullptr ? p.top_k[row] : 0;
  if (top_k > 0 && static_cast<std::size_t>(top_k) < kept) kept = top_k;
  const float top_p = p.top_p != nullptr ? p.top_p[row] : 1.0f;
  if (top_p < 1.0f) {
    double total = 0.0;
    for (std::size_t i = 0; i < kept; ++i) total += weight(ranked[i]);
    double cumulative = 0.0;
    for (std::size_t i = 0; i < kept; ++i) {
      cumulative += weight(ranked[i]);
      if (cumulative >= top_p * total) {
        kept = i + 1;
        break;
      }
    }
  }
  const float min_p = p.min_p != nullptr ? p.min_p[row] : 0.0f;
  std::vector<int32_t> chosen;
  for (std::size_t i = 0; i < kept; ++i) {
    if (weight(ranked[i]) >= min_p) chosen.push_back(ranked[i]);
  }
  std::sort(chosen.begin(), chosen.end());  // the draw walks ids upwards

  double total = 0.0;
  for (int32_t id : chosen) total += weight(id);
  const double target = UniformDraw(p.seeds[row], p.draw_index[row]) * total;
  double cumulative = 0.0;
  for (int32_t id : chosen) {
    cumulative += weight(id);
    if (cumulative > target) return id;
  }
  return chosen.back();  // rounding left the target at the very end
}

}  // namespace

template <>
void LaunchSampling<Backend::kReference>(const SamplingParams& p, Stream /*stream*/) {
  for (int r = 0; r < p.rows; ++r) {
    host::ApplyLogitAdjustments(p, r);
    p.out_tokens[r] = SampleRow(p, r);
  }
}

}  // namespace slotserve::kernels
