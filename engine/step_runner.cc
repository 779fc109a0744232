#include "engine/step_runner.h"

#include <optional>

#include "engine/ending_status.h"

namespace slotserve::engine {

StepRunner::StepRunner(models::LanguageModel& model, models::StateArena& arena,
                       EngineObserver& observer, RequestFinisher& finisher,
                       PrefixCache* prefix_cache)
    : model_(model),
      arena_(arena),
      observer_(observer),
      finisher_(finisher),
      prefix_cache_(prefix_cache),
      vocab_(static_cast<size_t>(model.config().vocab_size)) {}

void StepRunner::Run(const StepPlan& plan,
                     std::span<const std::unique_ptr<ActiveRequest>> running) {
  decode_batch_.clear();
  for (size_t i : plan.decode) decode_batch_.push_back(running[i].get());
  if (!decode_batch_.empty()) Decode(decode_batch_);
  for (const PromptChunk& chunk : plan.prefill) Prefill(*running[chunk.request], chunk.tokens);
}

std::span<const float> StepRunner::RawRows(std::span<const float> raw_logits, bool wanted,
                                           size_t* next_row) const {
  if (!wanted) return {};
  return raw_logits.subspan((*next_row)++ * vocab_, vocab_);
}

void StepRunner::Decode(std::span<ActiveRequest* const> batch) {
  decode_slots_.clear();
  decode_inputs_.clear();
  decode_sampling_.clear();
  size_t raw_rows = 0;
  for (const ActiveRequest* request : batch) {
    decode_slots_.push_back(request->slot());
    decode_inputs_.push_back(*request->next_input());
    decode_sampling_.push_back(request->NextTokenSampling());
    raw_rows += decode_sampling_.back().want_raw_logits ? 1 : 0;
  }
  decode_tokens_.assign(batch.size(), -1);
  raw_logits_.resize(raw_rows * vocab_);
  const absl::Time start = absl::Now();
  const absl::Status status = model_.StepAndSample(arena_, decode_slots_, decode_inputs_,
                                                   decode_sampling_, decode_tokens_, raw_logits_);
  const absl::Time end = absl::Now();
  observer_.OnStep(StepPhase::kDecode, static_cast<int>(batch.size()), end - start);
  if (status.ok())
    costs_.ObserveDecode(static_cast<int>(batch.size()), absl::ToDoubleSeconds(end - start));
  size_t next_raw_row = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    ActiveRequest& request = *batch[i];
    if (!status.ok()) {
      finisher_.Finish(request, FinishReason::kCancelled, ModelError("decode step", status));
      continue;
    }
    const std::span<const float> raw =
        RawRows(raw_logits_, decode_sampling_[i].want_raw_logits, &next_raw_row);
    HandleOutcome(request, request.AcceptToken(decode_tokens_[i], raw), end);
  }
}

void StepRunner::Prefill(ActiveRequest& request, int tokens) {
  const std::span<const int32_t> chunk = request.prompt_left().first(tokens);
  // Only the chunk that completes the prompt selects a token: the request's first.
  const bool completes_prompt = chunk.size() == request.prompt_left().size();
  std::optional<models::TokenSampling> sampling;
  absl::Status status;
  int32_t token = -1;
  const absl::Time start = absl::Now();
  if (completes_prompt) {
    sampling = request.NextTokenSampling();
    raw_logits_.resize(sampling->want_raw_logits ? vocab_ : 0);
    absl::StatusOr<int32_t> selected =
        model_.PrefillAndSample(arena_, request.slot(), chunk, *sampling, raw_logits_);
    status = selected.status();
    token = selected.value_or(-1);
  } else {
    prefill_logits_.resize(vocab_);
    status = model_.Prefill(arena_, request.slot(), chunk, models::LogitsWanted::kLastToken,
                            prefill_logits_);
  }
  const absl::Time end = absl::Now();
  observer_.OnStep(StepPhase::kPrefill, tokens, end - start);
  if (status.ok()) costs_.ObservePrefill(tokens, absl::ToDoubleSeconds(end - start));
  if (!status.ok()) {
    finisher_.Finish(request, FinishReason::kCancelled, ModelError("prefill", status));
    return;
  }
  request.PromptFed(chunk.size(), end);
  MaybeCheckpoint(request);
  if (sampling) {
    size_t next_raw_row = 0;
    const std::span<const float> raw =
        RawRows(raw_logits_, sampling->want_raw_logits, &next_raw_row);
    HandleOutcome(request, request.AcceptToken(token, raw), end);
  }
}

void StepRunner::MaybeCheckpoint(const ActiveRequest& request) {
  if (prefix_cache_ == nullptr || request.continues_session() || request.has_source()) return;
  const std::span<const int32_t> prefix = request.prompt_absorbed();
  if (!prefix_cache_->Wants(prefix)) return;  // also false off a block boundary
  std::vector<uint8_t> snapshot;
  if (!arena_.Save(request.slot(), &snapshot).ok()) return;  // a cache miss later, no more
  prefix_cache_->Insert(prefix, std::move(snapshot));
  observer_.OnPrefixCacheStats(prefix_cache_->stats());
}

void StepRunner::HandleOutcome(ActiveRequest& request, const ActiveRequest::TokenOutcome& outcome,
                               absl::Time now) {
  const ActiveRequest::TokenTiming timing = request.RecordTokenTime(now);
  if (timing.first) {
    observer_.OnFirstToken(timing.since);
  } else {
    observer_.OnInterTokenLatency(timing.since);
  }
  request.sink().OnTokens(outcome.chunk);
  if (outcome.finish) finisher_.Finish(request, *outcome.finish, absl::OkStatus());
}

}  // namespace slotserve::engine
