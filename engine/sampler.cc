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

RequestSampler::RequestSampler(const SamplingOptions& options, uint64_t seed,
                               std::span<const int32_t> prompt_ids,
                               std::span<const kernels::BiasedToken> logit_bias)
    : options_(options), seed_(seed), logit_bias_(logit_bias.begin(), logit_bias.end()) {
  if (options_.uses_penalties()) history_.emplace(prompt_ids);
}

void RequestSampler::AddNextToken(models::SamplingColumns& columns, std::span<const int32_t> masked,
                                  bool want_raw_logits) const {
  columns.temperature.push_back(options_.temperature);
  columns.top_k.push_back(options_.top_k);
  columns.top_p.push_back(options_.top_p);
  columns.min_p.push_back(options_.min_p);
  columns.repetition_penalty.push_back(options_.repetition_penalty);
  columns.presence_penalty.push_back(options_.presence_penalty);
  columns.frequency_penalty.push_back(options_.frequency_penalty);
  columns.seeds.push_back(seed_);
  columns.draw_index.push_back(static_cast<uint64_t>(tokens_sampled_));
  columns.AddLists(history_ ? history_->penalised() : std::span<const kernels::PenalisedToken>(),
                   logit_bias_, masked);
  columns.want_raw_logits.push_back(want_raw_logits ? 1 : 0);
}

void RequestSampler::Accept(int32_t token) {
  ++tokens_sampled_;
  if (history_) history_->AddGenerated(token);
}

}  // namespace slotserve::engine
