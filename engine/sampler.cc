#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/counter_rng.h"

namespace slotserve::engine {

using kernels::UniformDraw;
namespace {

struct Candidate {
  int32_t id;
  float logit;
  double weight;  // unnormalised probability, exp((logit - max) / temperature), max = 1
};

// Rank order: higher logit first, lower id on ties (as kernels/sampling.h). A total order,
// so results never depend on the sort algorithm.
bool MoreLikely(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

bool InRange(int32_t id, size_t size) { return id >= 0 && static_cast<size_t>(id) < size; }

// The tokens SampleToken may draw, with their weights (temperature > 0).
std::vector<Candidate> KeptCandidates(std::span<const float> logits,
                                      const SamplingOptions& options) {
  std::vector<Candidate> kept;
  kept.reserve(logits.size());
  float max_logit = -std::numeric_limits<float>::infinity();
  for (size_t id = 0; id < logits.size(); ++id) {
    if (!std::isfinite(logits[id])) continue;
    kept.push_back({static_cast<int32_t>(id), logits[id], 0.0});
    max_logit = std::max(max_logit, logits[id]);
  }
  // Rank by logit first, so the exponentials are only taken for what top-k keeps.
  if (options.top_k > 0 && static_cast<size_t>(options.top_k) < kept.size()) {
    std::nth_element(kept.begin(), kept.begin() + options.top_k, kept.end(), MoreLikely);
    kept.resize(options.top_k);
  }
  const double temperature = options.temperature;
  for (Candidate& c : kept) {
    c.weight = std::exp((static_cast<double>(c.logit) - max_logit) / temperature);
  }

  if (options.top_p < 1.0f) {
    double total = 0.0;
    for (const Candidate& c : kept) total += c.weight;
    // Tokens lighter than `floor` weigh less than (1 - top_p) / 2 of the total together, so
    // the nucleus never reaches them: drop them before sorting (a vocabulary-sized sort per
    // token would dominate the step).
    const double floor = (1.0 - options.top_p) * total / (2.0 * static_cast<double>(kept.size()));
    std::erase_if(kept, [floor](const Candidate& c) { return c.weight < floor; });
    std::sort(kept.begin(), kept.end(), MoreLikely);
    const double target = options.top_p * total;
    double cumulative = 0.0;
    for (size_t i = 0; i < kept.size(); ++i) {
      cumulative += kept[i].weight;
      if (cumulative >= target) {
        kept.resize(i + 1);
        break;
      }
    }
  }

  if (options.min_p > 0.0f) {
    double heaviest = 0.0;
    for (const Candidate& c : kept) heaviest = std::max(heaviest, c.weight);
    const double threshold = options.min_p * heaviest;
    std::erase_if(kept, [threshold](const Candidate& c) { return c.weight < threshold; });
  }
  // The draw walks ids upwards (as kernels/sampling.h does on the device), whatever order
  // truncation left them in.
  const auto by_id = [](const Candidate& a, const Candidate& b) { return a.id < b.id; };
  if (!std::is_sorted(kept.begin(), kept.end(), by_id)) std::sort(kept.begin(), kept.end(), by_id);
  return kept;
}

}  // namespace

TokenHistory::TokenHistory(std::span<const int32_t> prompt_ids)
    : seen_(prompt_ids.begin(), prompt_ids.end()) {}

void TokenHistory::AddGenerated(int32_t id) {
  seen_.insert(id);
  ++generated_counts_[id];
}

void ApplyPenalties(const SamplingOptions& options, const TokenHistory& history,
                    std::span<float> logits) {
  if (options.repetition_penalty != 1.0f) {
    const float penalty = options.repetition_penalty;
    for (int32_t id : history.seen()) {
      if (!InRange(id, logits.size())) continue;
      float& logit = logits[id];
      logit = logit > 0.0f ? logit / penalty : logit * penalty;
    }
  }
  if (options.presence_penalty != 0.0f || options.frequency_penalty != 0.0f) {
    for (const auto& [id, count] : history.generated_counts()) {
      if (!InRange(id, logits.size())) continue;
      logits[id] -= options.presence_penalty + options.frequency_penalty * count;
    }
  }
}

void MaskTokens(std::span<const int32_t> ids, std::span<float> logits) {
  for (int32_t id : ids) {
    if (InRange(id, logits.size())) logits[id] = -std::numeric_limits<float>::infinity();
  }
}

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

int32_t SampleToken(std::span<const float> logits, const SamplingOptions& options, double uniform) {
  if (options.temperature == 0.0f) return ArgMax(logits);
  const std::vector<Candidate> kept = KeptCandidates(logits, options);
  if (kept.empty()) return ArgMax(logits);
  double total = 0.0;
  for (const Candidate& c : kept) total += c.weight;
  const double target = uniform * total;
  double cumulative = 0.0;
  for (const Candidate& c : kept) {
    cumulative += c.weight;
    if (cumulative > target) return c.id;
  }
  return kept.back().id;  // rounding left target at the very end
}

std::vector<double> SamplingDistribution(std::span<const float> logits,
                                         const SamplingOptions& options) {
  if (options.temperature == 0.0f) return {};
  std::vector<double> probabilities(logits.size(), 0.0);
  const std::vector<Candidate> kept = KeptCandidates(logits, options);
  double total = 0.0;
  for (const Candidate& c : kept) total += c.weight;
  for (const Candidate& c : kept) probabilities[c.id] = c.weight / total;
  return probabilities;
}

GeneratedTokenLogprobs ComputeLogprobs(std::span<const float> raw_logits, int32_t chosen,
                                       int top_n) {
  GeneratedTokenLogprobs result;
  double max_logit = -std::numeric_limits<double>::infinity();
  for (float logit : raw_logits) {
    if (std::isfinite(logit)) max_logit = std::max(max_logit, static_cast<double>(logit));
  }
  double sum = 0.0;
  for (float logit : raw_logits) {
    if (std::isfinite(logit)) sum += std::exp(logit - max_logit);
  }
  const double log_normaliser = max_logit + std::log(sum);
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

RequestSampler::RequestSampler(const SamplingOptions& options, uint64_t seed,
                               std::span<const int32_t> prompt_ids)
    : options_(options), seed_(seed), history_(prompt_ids) {}

int32_t RequestSampler::Next(std::span<float> logits, std::span<const int32_t> masked) {
  const int32_t token = Choose(logits, masked);
  Accept(token);
  return token;
}

int32_t RequestSampler::Choose(std::span<float> logits, std::span<const int32_t> masked) const {
  ApplyPenalties(options_, history_, logits);
  MaskTokens(masked, logits);
  return SampleToken(logits, options_, UniformDraw(seed_, static_cast<uint64_t>(tokens_sampled_)));
}

void RequestSampler::Accept(int32_t token) {
  ++tokens_sampled_;
  history_.AddGenerated(token);
}

bool RequestSampler::uses_penalties() const {
  return options_.repetition_penalty != 1.0f || options_.presence_penalty != 0.0f ||
         options_.frequency_penalty != 0.0f;
}

}  // namespace slotserve::engine
