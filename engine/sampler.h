// Picks each generated token from the model's logits as SamplingOptions say (DESIGN §4), and
// computes the logprobs a client may ask for. Pure functions over one request's logits plus
// the small per-request bookkeeping the penalties need.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "engine/generation_events.h"
#include "engine/generation_request.h"

namespace slotserve::engine {

// The tokens penalties look at: repetition over prompt + generated, presence / frequency
// over generated only.
class TokenHistory {
 public:
  explicit TokenHistory(std::span<const int32_t> prompt_ids);
  void AddGenerated(int32_t id);

  const absl::flat_hash_set<int32_t>& seen() const { return seen_; }
  const absl::flat_hash_map<int32_t, int32_t>& generated_counts() const {
    return generated_counts_;
  }

 private:
  absl::flat_hash_set<int32_t> seen_;
  absl::flat_hash_map<int32_t, int32_t> generated_counts_;
};

// Repetition penalty (CTRL / HF: for every seen token, logit > 0 ? logit / p : logit * p),
// then presence and frequency penalties (OpenAI: logit -= presence * [n > 0] + frequency * n
// for every generated token with count n). Ids outside `logits` are ignored.
void ApplyPenalties(const SamplingOptions& options, const TokenHistory& history,
                    std::span<float> logits);

// Makes `ids` impossible to sample (-inf). Ids outside `logits` are ignored.
void MaskTokens(std::span<const int32_t> ids, std::span<float> logits);

// The id with the largest logit (lowest id on ties; NaN counts as -inf).
int32_t ArgMax(std::span<const float> logits);

// One token from `logits` (already penalised and masked): greedy when temperature is 0,
// otherwise softmax(logits / temperature) truncated by top-k, then top-p, then min-p
// (each on what the previous left; ranks by higher logit, lower id on ties), renormalised,
// and sampled by inverse CDF with `uniform` in [0, 1), walking the kept ids upwards. When
// nothing has a finite logit, falls back to ArgMax.
int32_t SampleToken(std::span<const float> logits, const SamplingOptions& options, double uniform);

// The probabilities SampleToken draws from (zero outside the kept set), for tests and
// diagnostics. Empty when temperature is 0 (greedy).
std::vector<double> SamplingDistribution(std::span<const float> logits,
                                         const SamplingOptions& options);

// log-softmax of the raw logits at `chosen`, plus the `top_n` most likely ids (descending,
// lower id first on ties).
GeneratedTokenLogprobs ComputeLogprobs(std::span<const float> raw_logits, int32_t chosen,
                                       int top_n);

// One request's sampler: its options, its RNG stream (draw i = token i) and its history.
class RequestSampler {
 public:
  RequestSampler(const SamplingOptions& options, uint64_t seed,
                 std::span<const int32_t> prompt_ids);

  // Picks the next token from `logits` (overwritten: penalties and masks are applied in
  // place). `masked` ids cannot be picked (min_new_tokens keeps eos and stop tokens out).
  // Choose, then Accept.
  int32_t Next(std::span<float> logits, std::span<const int32_t> masked);

  // The token Next would pick, without taking it: draw tokens_sampled() of the stream.
  int32_t Choose(std::span<float> logits, std::span<const int32_t> masked) const;
  // Takes `token` as the next one, whoever picked it (Choose, or the model's device sampler
  // given options() and draw tokens_sampled()): advances the stream and the history.
  void Accept(int32_t token);

  const SamplingOptions& options() const { return options_; }
  // Whether penalties change the logits, so a token needs this request's history.
  bool uses_penalties() const;
  uint64_t seed() const { return seed_; }
  int64_t tokens_sampled() const { return tokens_sampled_; }

 private:
  SamplingOptions options_;
  uint64_t seed_;
  int64_t tokens_sampled_ = 0;
  TokenHistory history_;
};

}  // namespace slotserve::engine
