// Token selection on the cpu backend (kernels/sampling.h). The rule is the reference's, without
// its full sort of the vocabulary per row: top-k and top-p rank only the tokens up to where a
// histogram of the row's logits shows the kept ones end (truncation.h). The draw then walks
// the kept ids upwards as the reference does. The weights (an exponential per token, in
// double) are computed four at a time (sampling_weights.h); a row with a temperature and no
// truncation draws straight from them, without building a candidate list. Rows are split
// between the compute threads: each row's draw depends only on its own logits, seed and draw
// index (counter_rng.h), so the split never changes a token.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "kernels/counter_rng.h"
#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/sampling_weights.h"
#include "kernels/cpu/truncation.h"
#include "kernels/reference/logit_adjustments.h"
#include "kernels/sampling.h"

namespace slotserve::kernels {
namespace {

struct Candidate {
  int32_t id;
  double weight;  // unnormalised probability, exp((logit - max) / temperature), max = 1
};

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
// `weights` (resized to the vocabulary). Returns the largest finite logit, which weighs 1.
float ComputeWeights(std::span<const float> logits, float temperature,
                     std::vector<double>& weights) {
  weights.resize(logits.size());
  const int n = static_cast<int>(logits.size());
  const float max_logit = cpu::MaxFinite(logits.data(), n);
  cpu::SamplingWeights(logits.data(), n, max_logit, temperature, weights.data());
  return max_logit;
}

// A row's truncation options.
struct Truncation {
  int32_t top_k;
  float top_p;
  float min_p;
};

// The tokens a row may draw under truncation, with their weights (ComputeWeights), in id order.
std::vector<Candidate> KeptCandidates(std::span<const float> logits,
                                      std::span<const double> weights, float max_logit,
                                      float temperature, const Truncation& t) {
  thread_local std::vector<int32_t> ids;
  cpu::TruncatedIds(logits, weights, max_logit, temperature, t.top_k, t.top_p, ids);
  std::vector<Candidate> kept;
  kept.reserve(ids.size());
  for (int32_t id : ids) kept.push_back({id, weights[id]});
  const float min_p = t.min_p;
  if (min_p > 0.0f) {
    double heaviest = 0.0;
    for (const Candidate& c : kept) heaviest = std::max(heaviest, c.weight);
    const double threshold = min_p * heaviest;
    std::erase_if(kept, [threshold](const Candidate& c) { return c.weight < threshold; });
  }
  return kept;  // in id order, which the draw walks upwards
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
  const float max_logit = ComputeWeights(logits, temperature, weights);
  const Truncation truncation{p.top_k != nullptr ? p.top_k[row] : 0,
                              p.top_p != nullptr ? p.top_p[row] : 1.0f,
                              p.min_p != nullptr ? p.min_p[row] : 0.0f};
  if (truncation.top_k <= 0 && truncation.top_p >= 1.0f && truncation.min_p <= 0.0f) {
    return DrawFromAll(logits, weights, UniformDraw(p.seeds[row], p.draw_index[row]));
  }
  const std::vector<Candidate> kept =
      KeptCandidates(logits, weights, max_logit, temperature, truncation);
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
  const float max_logit = ComputeWeights(logits, temperature, weights);
  const std::vector<Candidate> kept =
      KeptCandidates(logits, weights, max_logit, temperature, {top_k, top_p, min_p});
  double total = 0.0;
  for (const Candidate& c : kept) total += c.weight;
  for (const Candidate& c : kept) probabilities[c.id] = c.weight / total;
  return probabilities;
}

}  // namespace slotserve::kernels
