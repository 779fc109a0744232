#include "engine/sampler.h"

namespace slotserve::engine {

TokenHistory::TokenHistory(std::span<const int32_t> prompt_ids) {
  for (int32_t id : prompt_ids) Entry(id);
}

void TokenHistory::AddGenerated(int32_t id) { ++Entry(id).generated; }

kernels::PenalisedToken& TokenHistory::Entry(int32_t id) {
  const auto [it, added] = index_.try_emplace(id, tokens_.size());
  if (added) tokens_.push_back({.id = id, .generated = 0});
  return tokens_[it->second];
}

RequestSampler::RequestSampler(const models::SamplingOptions& options, uint64_t seed,
                               std::span<const int32_t> prompt_ids,
                               std::span<const kernels::BiasedToken> logit_bias)
    : options_(options), seed_(seed), logit_bias_(logit_bias.begin(), logit_bias.end()) {
  if (options_.uses_penalties()) history_.emplace(prompt_ids);
}

models::TokenSampling RequestSampler::NextToken(std::span<const int32_t> masked,
                                                bool want_raw_logits) const {
  models::TokenSampling row;
  row.options = options_;
  row.seed = seed_;
  row.draw_index = static_cast<uint64_t>(tokens_sampled_);
  if (history_) row.penalised = history_->penalised();
  row.biased = logit_bias_;
  row.masked = masked;
  row.want_raw_logits = want_raw_logits;
  return row;
}

void RequestSampler::Accept(int32_t token) {
  ++tokens_sampled_;
  if (history_) history_->AddGenerated(token);
}

}  // namespace slotserve::engine
