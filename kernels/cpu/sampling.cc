// Token selection on the cpu backend (kernels/sampling.h). The rule is the reference's, without
// its full sort of the vocabulary per row: top-k keeps its k by partial selection
// (nth_element), and top-p first drops the tokens too light to ever reach the nucleus, so only
// the few that can are sorted. The draw then walks the kept ids upwards as the reference does.
// Rows are split between the compute threads: each row's draw depends only on its own logits,
// seed and draw index (counter_rng.h), so the split never changes a token, and a batch of
// sampled rows (an exponential per kept token, ~55 µs a row at vocabulary 4,000) no longer runs
// on the calling thread alone while the others wait.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "kernels/counter_rng.h"
#include "kernels/cpu/parallel_for.h"
#include "kernels/reference/logit_adjustments.h"
#include "kernels/sampling.h"

namespace slotserve::kernels {
namespace {

struct Candidate {
  int32_t id;
  float logit;
  double weight;  // unnormalised probability, exp((logit - max) / temperature), max = 1
};

// Rank order: higher logit first, lower id on ties. A total order, so results never depend on
// the selection or sort algorithm.
bool MoreLikely(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// The lowest id with the largest logit (NaN never wins; id 0 when nothing is finite).
int32_t ArgMax(std::span<const float> logits) {
  int32_t best = 0;
  float best_logit = -std::numeric_limits<float>::infinity();
  for (size_t id = 0; id < logits.size(); ++id) {
    if (logits[id] > best_logit) {  // false for NaN
      best_logit = logits[id];
      best = static_cast<int32_t>(id);
    }
  }
  return best;
}

// The tokens a row with temperature > 0 may draw, with their weights, in id order.
std::vector<Candidate> KeptCandidates(std::span<const float> logits, float temperature,
                                      int32_t top_k, float top_p, float min_p) {
  std::vector<Candidate> kept;
  kept.reserve(logits.size());
  float max_logit = -std::numeric_limits<float>::infinity();
  for (size_t id = 0; id < logits.size(); ++id) {
    if (!std::isfinite(logits[id])) continue;
    kept.push_back({static_cast<int32_t>(id), logits[id], 0.0});
    max_logit = std::max(max_logit, logits[id]);
  }
  // Rank by logit first, so the exponentials are only taken for what top-k keeps.
  if (top_k > 0 && static_cast<size_t>(top_k) < kept.size()) {
    std::nth_element(kept.begin(), kept.begin() + top_k, kept.end(), MoreLikely);
    kept.resize(top_k);
  }
  for (Candidate& c : kept) {
    c.weight = std::exp((static_cast<double>(c.logit) - max_logit) / temperature);
  }

  if (top_p < 1.0f) {
    double total = 0.0;
    for (const Candidate& c : kept) total += c.weight;
    // Tokens lighter than `floor` weigh less than (1 - top_p) / 2 of the total together, so
    // the nucleus never reaches them: drop them before sorting (a vocabulary-sized sort per
    // token would dominate the step).
    const double floor = (1.0 - top_p) * total / (2.0 * static_cast<double>(kept.size()));
    std::erase_if(kept, [floor](const Candidate& c) { return c.weight < floor; });
    std::sort(kept.begin(), kept.end(), MoreLikely);
    const double target = top_p * total;
    double cumulative = 0.0;
    for (size_t i = 0; i < kept.size(); ++i) {
      cumulative += kept[i].weight;
      if (cumulative >= target) {
        kept.resize(i + 1);
        break;
      }
    }
  }

  if (min_p > 0.0f) {
    double heaviest = 0.0;
    for (const Candidate& c : kept) heaviest = std::max(heaviest, c.weight);
    const double threshold = min_p * heaviest;
    std::erase_if(kept, [threshold](const Candidate& c) { return c.weight < threshold; });
  }
  // The draw walks ids upwards, whatever order truncation left them in.
  const auto by_id = [](const Candidate& a, const Candidate& b) { return a.id < b.id; };
  if (!std::is_sorted(kept.begin(), kept.end(), by_id)) std::sort(kept.begin(), kept.end(), by_id);
  return kept;
}

int32_t SampleRow(const SamplingParams& p, int row) {
  const std::span<const float> logits(p.logits + row * p.logits_stride, p.vocab);
  const float temperature = p.temperature[row];
  if (temperature <= 0.0f) return ArgMax(logits);
  const std::vector<Candidate> kept = KeptCandidates(
      logits, temperature, p.top_k != nullptr ? p.top_k[row] : 0,
      p.top_p != nullptr ? p.top_p[row] : 1.0f, p.min_p != nullptr ? p.min_p[row] : 0.0f);
  if (kept.empty()) return ArgMax(logits);
  double total = 0.0;
  for (const Candidate& c : kept) total += c.weight;
  const double target = UniformDraw(p.seeds[row], p.draw_index[row]) * total;
  double cumulative = 0.0;
  for (const Candidate& c : kept) {
    cumulative += c.weight;
    if (cumulative > target) return c.id;
  }
  return kept.back().id;  // rounding left the target at the very end
}

}  // namespace

template <>
void LaunchSampling<Backend::kCpu>(const SamplingParams& p, Stream /*stream*/) {
  // An argmax is a comparison per token; a sampled row takes a double exponential per token
  // kept (~20 ns, as long as ~400 multiply-adds on 256-bit FMAs).
  int64_t work = 0;
  for (int r = 0; r < p.rows; ++r) work += int64_t{p.vocab} * (p.temperature[r] > 0.0f ? 400 : 1);
  cpu::ParallelFor(p.rows, work, [&](int begin, int end) {
    for (int r = begin; r < end; ++r) {
      host::ApplyLogitAdjustments(p, r);
      p.out_tokens[r] = SampleRow(p, r);
    }
  });
}

std::vector<double> SamplingDistribution(std::span<const float> logits, float temperature,
                                         int32_t top_k, float top_p, float min_p) {
  if (temperature == 0.0f) return {};
  std::vector<double> probabilities(logits.size(), 0.0);
  const std::vector<Candidate> kept = KeptCandidates(logits, temperature, top_k, top_p, min_p);
  double total = 0.0;
  for (const Candidate& c : kept) total += c.weight;
  for (const Candidate& c : kept) probabilities[c.id] = c.weight / total;
  return probabilities;
}

}  // namespace slotserve::kernels
