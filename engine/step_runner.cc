#include "engine/step_runner.h"

#include <utility>

#include "base/status_macros.h"
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
  decode_sampling_.Clear();
  decode_rows_.clear();
  for (const ActiveRequest* request : batch) {
    const size_t rows_before = decode_slots_.size();
    if (const BeamRequest* beam = request->beam(); beam != nullptr) {
      // Every live hypothesis is a row of its own: its slot, its last token.
      for (const BeamSearch::Hypothesis& hypothesis : beam->live()) {
        decode_slots_.push_back(hypothesis.slot);
        decode_inputs_.push_back(hypothesis.ids.back());
        request->AddNextTokenRow(decode_sampling_);
      }
    } else {
      decode_slots_.push_back(request->slot());
      decode_inputs_.push_back(*request->next_input());
      request->AddNextTokenRow(decode_sampling_);
    }
    decode_rows_.push_back(static_cast<int>(decode_slots_.size() - rows_before));
  }
  const size_t raw_rows = decode_sampling_.raw_rows();
  decode_tokens_.assign(decode_slots_.size(), -1);
  raw_logits_.resize(raw_rows * vocab_);
  const absl::Time start = absl::Now();
  const absl::Status status = model_.StepAndSample(arena_, decode_slots_, decode_inputs_,
                                                   decode_sampling_, decode_tokens_, raw_logits_);
  const absl::Time end = absl::Now();
  const int rows = static_cast<int>(decode_slots_.size());
  observer_.OnStep(StepPhase::kDecode, rows, end - start);
  if (status.ok()) costs_.ObserveDecode(rows, absl::ToDoubleSeconds(end - start));
  size_t first_row = 0;
  size_t next_raw_row = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    ActiveRequest& request = *batch[i];
    const size_t row = first_row;
    first_row += decode_rows_[i];
    if (!status.ok()) {
      finisher_.Finish(request, FinishReason::kCancelled, ModelError("decode step", status));
      continue;
    }
    if (request.beam() != nullptr) {
      const size_t count = static_cast<size_t>(decode_rows_[i]);
      AdvanceBeam(
          request,
          std::span<const float>(raw_logits_).subspan(next_raw_row * vocab_, count * vocab_), end);
      next_raw_row += count;
      continue;
    }
    const std::span<const float> raw =
        RawRows(raw_logits_, decode_sampling_.want_raw_logits[row] != 0, &next_raw_row);
    HandleOutcome(request, request.AcceptToken(decode_tokens_[row], raw), end);
  }
}

void StepRunner::Prefill(ActiveRequest& request, int tokens) {
  const std::span<const int32_t> chunk = request.prompt_left().first(tokens);
  // Only the chunk that completes the prompt selects a token: the request's first.
  const bool completes_prompt = chunk.size() == request.prompt_left().size();
  // A prompt being scored is fed asking for every row's logits, but for the row that selects
  // the first token: the rows whose next token is in the prompt.
  const bool scores_prompt = request.request().logprobs.prompt;
  const std::span<const int32_t> scored =
      !scores_prompt ? std::span<const int32_t>() : chunk.first(chunk.size() - completes_prompt);
  bool selects = false;
  absl::Status status;
  int32_t token = -1;
  const absl::Time start = absl::Now();
  if (!scored.empty()) status = ScorePrompt(request, scored);
  const std::span<const int32_t> rest = chunk.subspan(scored.size());
  if (status.ok() && !rest.empty()) {
    if (completes_prompt) {
      selects = true;
      prefill_sampling_.Clear();
      request.AddNextTokenRow(prefill_sampling_);
      raw_logits_.resize(prefill_sampling_.raw_rows() * vocab_);
      absl::StatusOr<int32_t> selected =
          model_.PrefillAndSample(arena_, request.slot(), rest, prefill_sampling_, raw_logits_);
      status = selected.status();
      token = selected.value_or(-1);
    } else {
      prefill_logits_.resize(vocab_);
      status = model_.Prefill(arena_, request.slot(), rest, models::LogitsWanted::kLastToken,
                              prefill_logits_);
    }
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
  if (scores_prompt && request.choice_index() == 0) {
    // Before the first token's chunk, so that a client sees the prompt first.
    TokenChunk scores;
    scores.prompt_logprobs =
        request.prompt_scores().TakeWhenComplete(request.request().prompt_ids.size());
    if (scores.prompt_logprobs.has_value()) request.sink().OnTokens(scores);
  }
  if (selects) {
    size_t next_raw_row = 0;
    const std::span<const float> raw =
        RawRows(raw_logits_, prefill_sampling_.raw_rows() > 0, &next_raw_row);
    if (request.beam() != nullptr) {
      AdvanceBeam(request, raw, end);  // the prompt's last row starts the search
    } else {
      HandleOutcome(request, request.AcceptToken(token, raw), end);
    }
  }
}

absl::Status StepRunner::ScorePrompt(ActiveRequest& request, std::span<const int32_t> tokens) {
  prefill_logits_.resize(tokens.size() * vocab_);
  SLOTSERVE_RETURN_IF_ERROR(model_.Prefill(arena_, request.slot(), tokens,
                                           models::LogitsWanted::kEveryToken, prefill_logits_));
  const GenerationRequest& options = request.request();
  request.prompt_scores().AddRows(prefill_logits_, vocab_, options.prompt_ids, request.prompt_fed(),
                                  static_cast<int>(options.logprobs.top_n));
  return absl::OkStatus();
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

void StepRunner::ObserveTokenTime(ActiveRequest& request, absl::Time now) {
  const ActiveRequest::TokenTiming timing = request.RecordTokenTime(now);
  if (timing.first) {
    observer_.OnFirstToken(timing.since);
  } else {
    observer_.OnInterTokenLatency(timing.since);
  }
}

void StepRunner::AdvanceBeam(ActiveRequest& request, std::span<const float> raw_rows,
                             absl::Time now) {
  BeamRequest::StepOutcome outcome =
      request.AdvanceBeam(raw_rows, static_cast<int>(vocab_), arena_);
  for (int slot : outcome.released) finisher_.ReleaseSlot(request, slot);
  if (!outcome.status.ok()) {
    finisher_.Finish(request, FinishReason::kCancelled, std::move(outcome.status));
    return;
  }
  ObserveTokenTime(request, now);
  if (!request.beam()->done()) return;
  // Beam tokens are final only now: the best hypothesis goes out as one chunk.
  const TokenChunk best = request.BeamResultChunk();
  if (best.ids.empty()) {
    finisher_.Finish(request, FinishReason::kCancelled,
                     absl::InternalError("beam search: no token had a finite logit"));
    return;
  }
  request.sink().OnTokens(best);
  finisher_.Finish(request, request.beam()->Results().front().reason, absl::OkStatus());
}

void StepRunner::HandleOutcome(ActiveRequest& request, const ActiveRequest::TokenOutcome& outcome,
                               absl::Time now) {
  ObserveTokenTime(request, now);
  request.sink().OnTokens(outcome.chunk);
  if (outcome.finish) finisher_.Finish(request, *outcome.finish, absl::OkStatus());
}

}  // namespace slotserve::engine
