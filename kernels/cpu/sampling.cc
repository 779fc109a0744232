// Token selection on the cpu backend (kernels/sampling.h). The rule is the reference's, without
// its full sort of the vocabulary per row: top-k keeps its k by partial selection
// (nth_element), and top-p first drops the tokens too light to ever reach the nucleus, so only
// the few that can are sorted. The draw then walks the kept ids upwards as the reference does.
// The weights (an exponential per token, in double) are computed four at a time
// (sampling_weights.h); a row with a temperature and no truncation draws straight from them,
// without building a candidate list. Rows are split between the compute threads: each row's
// draw depends only on its own logits, seed and draw index (counter_rng.h), so the split never
// changes a token.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "kernels/counter_rng.h"
#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/sampling_weights.h"
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

// The rank order of MoreLikely as one integer, smallest first: a finite logit's bits mapped so
// that unsigned order is float order (-0 taken as +0, which compares equal), complemented for
// higher first, then the id. Sorting these is several times faster than sorting candidates
// through a comparator.
uint64_t RankKey(float logit, int32_t id) {
  const uint32_t bits = std::bit_cast<uint32_t>(logit + 0.0f);
  const uint32_t ascending = (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
  return (uint64_t{~ascending} << 32) | static_cast<uint32_t>(id);
}

// `kept` in rank order (MoreLikely), rebuilt from the row's logits and weights.
void SortByRank(std::vector<Candidate>& kept, std::span<const float> logits,
                std::span<const double> weights) {
  std::vector<uint64_t> keys;
  keys.reserve(kept.size());
  for (const Candidate& c : kept) keys.push_back(RankKey(c.logit, c.id));
  std::sort(keys.begin(), keys.end());
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto id = static_cast<int32_t>(keys[i] & 0xffffffffu);
    kept[i] = {id, logits[id], weights[id]};
  }
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

// Every token's weight for a row with temperature > 0 (0 for a non-finite logit), into
// `weights` (resized to the vocabulary).
void ComputeWeights(std::span<const float> logits, float temperature,
                    std::vector<double>& weights) {
  weights.resize(logits.size());
  const int n = static_cast<int>(logits.size());
  cpu::SamplingWeights(logits.data(), n, cpu::MaxFinite(logits.data(), n), temperature,
                       weights.data());
}

// The tokens a row may draw under truncation, with their weights (ComputeWeights), in id order.
std::vector<Candidate> KeptCandidates(std::span<const float> logits,
                                      std::span<const double> weights, int32_t top_k, float top_p,
                                      float min_p) {
  std::vector<Candidate> kept;
  kept.reserve(logits.size());
  for (size_t id = 0; id < logits.size(); ++id) {
    if (!std::isfinite(logits[id])) continue;
    kept.push_back({static_cast<int32_t>(id), logits[id], weights[id]});
  }
  if (top_k > 0 && static_cast<size_t>(top_k) < kept.size()) {
    std::nth_element(kept.begin(), kept.begin() + top_k, kept.end(), MoreLikely);
    kept.resize(top_k);
  }

  if (top_p < 1.0f) {
    double total = 0.0;
    for (const Candidate& c : kept) total += c.weight;
    // Tokens lighter than `floor` weigh less than (1 - top_p) / 2 of the total together, so
    // the nucleus never reaches them: drop them before sorting (a vocabulary-sized sort per
    // token would dominate the step).
    const double floor = (1.0 - top_p) * total / (2.0 * static_cast<double>(kept.size()));
    std::erase_if(kept, [floor](const Candidate& c) { return c.weight < floor; });
    SortByRank(kept, logits, weights);
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

// The draw over every token, in id order (no truncation): the candidate walk below with all
// finite tokens kept, whose zero-weight tokens add nothing to the sums and are never drawn.
int32_t DrawFromAll(std::span<const float> logits, std::span<const double> weights,
                    double uniform) {
  double total = 0.0;
  for (double w : weights) total += w;
  if (!(total > 0.0)) return ArgMax(logits);
  const double target = uniform * total;
  double cumulative = 0.0;
  int32_t last = 0;
  for (size_t id = 0; id < weights.size(); ++id) {
    if (weights[id] == 0.0) continue;
    cumulative += weights[id];
    if (cumulative > target) return static_cast<int32_t>(id);
    last = static_cast<int32_t>(id);
  }
  return last;  // rounding left the target at the very end
}

int32_t SampleRow(const SamplingParams& p, int row, std::vector<double>& weights) {
  const std::span<const float> logits(p.logits + row * p.logits_stride, p.vocab);
  const float temperature = p.temperature[row];
  if (temperature <= 0.0f) return ArgMax(logits);
  ComputeWeights(logits, temperature, weights);
  const int32_t top_k = p.top_k != nullptr ? p.top_k[row] : 0;
  const float top_p = p.top_p != nullptr ? p.top_p[row] : 1.0f;
  const float min_p = p.min_p != nullptr ? p.min_p[row] : 0.0f;
  if (top_k <= 0 && top_p >= 1.0f && min_p <= 0.0f) {
    return DrawFromAll(logits, weights, UniformDraw(p.seeds[row], p.draw_index[row]));
  }
  const std::vector<Candidate> kept = KeptCandidates(logits, weights, top_k, top_p, min_p);
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
  // An argmax is a comparison per token; a sampled row takes an exponential and two dependent
  // double adds per token (~4 ns, as long as ~80 multiply-adds on 256-bit FMAs).
  int64_t work = 0;
  for (int r = 0; r < p.rows; ++r) work += int64_t{p.vocab} * (p.temperature[r] > 0.0f ? 80 : 1);
  cpu::ParallelFor(p.rows, work, [&](int begin, int end) {
    // Each compute thread keeps its weight buffer across steps: no allocation per step.
    thread_local std::vector<double> weights;
    for (int r = begin; r < end; ++r) {
      host::ApplyLogitAdjustments(p, r);
      p.out_tokens[r] = SampleRow(p, r, weights);
    }
  });
}

std::vector<double> SamplingDistribution(std::span<const float> logits, float temperature,
                                         int32_t top_k, float top_p, float min_p) {
  if (temperature == 0.0f) return {};
  std::vector<double> probabilities(logits.size(), 0.0);
  std::vector<double> weights;
  ComputeWeights(logits, temperature, weights);
  const std::vector<Candidate> kept = KeptCandidates(logits, weights, top_k, top_p, min_p);
  double total = 0.0;
  for (const Candidate& c : kept) total += c.weight;
  for (const Candidate& c : kept) probabilities[c.id] = c.weight / total;
  return probabilities;
}

}  // namespace slotserve::kernels
