// One request's side of token selection (docs/ARCHITECTURE.md "A request's path"): its options, its
// random stream (draw i is token i) and the history its penalties read, turned into its row of the
// selection op's columns (models::SamplingColumns). The rule itself is kernels/sampling.h: the op
// applies the penalties and masks to the logits and picks the token, where the logits are.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/sampling_options.h"
#include "kernels/sampling.h"
#include "models/sampling_columns.h"

namespace slotserve::engine {

// The tokens penalties look at, kept as the op's penalised list: every id of the prompt and of
// the generated tokens once, with how often it was generated (repetition reads them all,
// presence / frequency only the generated ones).
class TokenHistory {
 public:
  explicit TokenHistory(std::span<const int32_t> prompt_ids);
  void AddGenerated(int32_t id);

  // Distinct ids, in the order first seen.
  std::span<const kernels::PenalisedToken> penalised() const { return tokens_; }

 private:
  // The entry of `id`, added with a count of 0 when new.
  kernels::PenalisedToken& Entry(int32_t id);

  std::vector<kernels::PenalisedToken> tokens_;
  absl::flat_hash_map<int32_t, size_t> index_;  // id -> its entry in tokens_
};

// One request's sampler: its options, its RNG stream and (when a penalty is on) its history.
class RequestSampler {
 public:
  // `logit_bias` (checked: distinct ids) is copied.
  RequestSampler(const SamplingOptions& options, uint64_t seed, std::span<const int32_t> prompt_ids,
                 std::span<const kernels::BiasedToken> logit_bias = {});

  // Appends the op's row for the next token to `columns`: the options, the seed, draw
  // tokens_sampled() of the stream, the history when a penalty reads it, the logit biases,
  // `masked` (ids the token may not be) and whether the call hands back its raw logits.
  void AddNextToken(models::SamplingColumns& columns, std::span<const int32_t> masked,
                    bool want_raw_logits) const;
  // Takes `token` as the next one: advances the stream and the history.
  void Accept(int32_t token);

  const SamplingOptions& options() const { return options_; }
  uint64_t seed() const { return seed_; }
  int64_t tokens_sampled() const { return tokens_sampled_; }

 private:
  SamplingOptions options_;
  uint64_t seed_;
  int64_t tokens_sampled_ = 0;
  std::optional<TokenHistory> history_;  // only kept when a penalty reads it
  std::vector<kernels::BiasedToken> logit_bias_;
};

}  // namespace slotserve::engine
