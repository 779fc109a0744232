// Token selection on the cpu backend (kernels/sampling.h). The rule is the reference's, without
// its full sort of the vocabulary per row: top-k and top-p rank only the tokens up to where a
// histogram of the row's logits shows the kept ones end (truncation.h), and top-k narrows the
// row before any weight is computed. The draw then walks the kept ids upwards as the reference
// does. The weights (an exponential per token, in double) are computed four at a time with
// their running sums (sampling_weights.h); a row with a temperature and no truncation draws
// by a binary search of those sums, without building a candidate list. Rows are split between
// the compute threads: each row's draw depends only on its own logits, seed and draw index
// (counter_rng.h), so the split never changes a token.
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

// Per compute thread: a row's buffers, kept across steps, so that a sampled step allocates
// nothing once they have grown.
struct RowScratch {
  std::vector<double> weights;     // of the row's tokens (or of top-k's), in id order
  std::vector<double> cumulative;  // their running sums
  std::vector<int32_t> top_k_ids;
  std::vector<float> top_k_logits;
  std::vector<int32_t> nucleus;  // indices into the (possibly narrowed) row
  std::vector<Candidate> kept;   // KeptCandidates' result
};

// Every token's weight (0 for a non-finite logit) and their running sums in id order, into
// scratch; returns their total.
double WeighRow(std::span<const float> logits, float max_logit, float temperature,
                RowScratch& scratch) {
  const int n = static_cast<int>(logits.size());
  scratch.weights.resize(n);
  scratch.cumulative.resize(n);
  cpu::SamplingWeightsAndCumulative(logits.data(), n, max_logit, temperature,
                                    scratch.weights.data(), scratch.cumulative.data());
  return n > 0 ? scratch.cumulative.back() : 0.0;
}

// A row's truncation options.
struct Truncation {
  int32_t top_k;
  float top_p;
  float min_p;
};

// The tokens a row may draw under truncation, with their weights, in id order, into
// scratch.kept.
const std::vector<Candidate>& KeptCandidates(std::span<const float> logits, float temperature,
                                             const Truncation& t, RowScratch& scratch) {
  const float max_logit = cpu::MaxFinite(logits.data(), static_cast<int>(logits.size()));
  // Top-k first narrows the row to its k tokens (in id order, so ties still rank by id): only
  // their weights are computed, and top-p ranks only them.
  std::span<const float> row = logits;
  const bool narrowed = t.top_k > 0 && static_cast<size_t>(t.top_k) < logits.size();
  if (narrowed) {
    cpu::TopKIds(logits, max_logit, temperature, t.top_k, scratch.top_k_ids);
    scratch.top_k_logits.resize(scratch.top_k_ids.size());
    for (size_t i = 0; i < scratch.top_k_ids.size(); ++i) {
      scratch.top_k_logits[i] = logits[scratch.top_k_ids[i]];
    }
    row = scratch.top_k_logits;
  }
  const double total = WeighRow(row, max_logit, temperature, scratch);
  const auto id_of = [&](size_t i) {
    return narrowed ? scratch.top_k_ids[i] : static_cast<int32_t>(i);
  };
  std::vector<Candidate>& kept = scratch.kept;
  kept.clear();
  if (t.top_p < 1.0f) {
    cpu::TopPIds(row, scratch.weights, max_logit, total, temperature, t.top_p, scratch.nucleus);
    kept.reserve(scratch.nucleus.size());
    for (int32_t i : scratch.nucleus) kept.push_back({id_of(i), scratch.weights[i]});
  } else {
    for (size_t i = 0; i < row.size(); ++i) {
      if (std::isfinite(row[i])) kept.push_back({id_of(i), scratch.weights[i]});
    }
  }
  if (t.min_p > 0.0f) {
    double heaviest = 0.0;
    for (const Candidate& c : kept) heaviest = std::max(heaviest, c.weight);
    const double threshold = t.min_p * heaviest;
    std::erase_if(kept, [threshold](const Candidate& c) { return c.weight < threshold; });
  }
  return kept;  // in id order, which the draw walks upwards
}

// The draw over every token, in id order (no truncation): the candidate walk below with all
// finite tokens kept, whose zero-weight tokens add nothing to the sums and are never drawn.
// `cumulative` holds the walk's running sums (SamplingWeightsAndCumulative), so the walk is a
// binary search: sums never fall, and only a token of nonzero weight can raise one past the
// target.
int32_t DrawFromAll(std::span<const float> logits, std::span<const double> weights,
                    std::span<const double> cumulative, double uniform) {
  const double total = cumulative.empty() ? 0.0 : cumulative.back();
  if (!(total > 0.0)) return ArgMax(logits);
  const double target = uniform * total;
  const auto passed = std::upper_bound(cumulative.begin(), cumulative.end(), target);
  if (passed != cumulative.end()) return static_cast<int32_t>(passed - cumulative.begin());
  // Rounding left the target at the very end: the last token of nonzero weight.
  for (size_t id = weights.size(); id-- > 0;) {
    if (weights[id] != 0.0) return static_cast<int32_t>(id);
  }
  return 0;  // not reached: total > 0
}

int32_t SampleRow(const SamplingParams& p, int row, RowScratch& scratch) {
  const std::span<const float> logits(p.logits + row * p.logits_stride, p.vocab);
  const float temperature = p.temperature[row];
  if (temperature <= 0.0f) return ArgMax(logits);
  const Truncation truncation{p.top_k != nullptr ? p.top_k[row] : 0,
                              p.top_p != nullptr ? p.top_p[row] : 1.0f,
                              p.min_p != nullptr ? p.min_p[row] : 0.0f};
  const double uniform = UniformDraw(p.seeds[row], p.draw_index[row]);
  if (truncation.top_k <= 0 && truncation.top_p >= 1.0f && truncation.min_p <= 0.0f) {
    WeighRow(logits, cpu::MaxFinite(logits.data(), p.vocab), temperature, scratch);
    return DrawFromAll(logits, scratch.weights, scratch.cumulative, uniform);
  }
  const std::vector<Candidate>& kept = KeptCandidates(logits, temperature, truncation, scratch);
  if (kept.empty()) return ArgMax(logits);
  double total = 0.0;
  for (const Candidate& c : kept) total += c.weight;
  const double target = uniform * total;
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
    thread_local RowScratch scratch;
    for (int r = begin; r < end; ++r) {
      host::ApplyLogitAdjustments(p, r);
      p.out_tokens[r] = SampleRow(p, r, scratch);
    }
  });
}

std::vector<double> SamplingDistribution(std::span<const float> logits, float temperature,
                                         int32_t top_k, float top_p, float min_p) {
  if (temperature == 0.0f) return {};
  std::vector<double> probabilities(logits.size(), 0.0);
  RowScratch scratch;
  const std::vector<Candidate>& kept =
      KeptCandidates(logits, temperature, {top_k, top_p, min_p}, scratch);
  double total = 0.0;
  for (const Candidate& c : kept) total += c.weight;
  for (const Candidate& c : kept) probabilities[c.id] = c.weight / total;
  return probabilities;
}

}  // namespace slotserve::kernels
