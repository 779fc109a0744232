#include "engine/step_runner.h"

#include <optional>

#include "engine/ending_status.h"

namespace slotserve::engine {

StepRunner::StepRunner(models::LanguageModel& model, models::StateArena& arena,
                       EngineObserver& observer, RequestFinisher& finisher, bool sample_on_device)
    : model_(model),
      arena_(arena),
      observer_(observer),
      finisher_(finisher),
      sample_on_device_(sample_on_device) {}

void StepRunner::Run(const StepPlan& plan,
                     std::span<const std::unique_ptr<ActiveRequest>> running) {
  decode_batch_.clear();
  for (size_t i : plan.decode) decode_batch_.push_back(running[i].get());
  if (!decode_batch_.empty()) Decode(decode_batch_);
  for (const PromptChunk& chunk : plan.prefill) Prefill(*running[chunk.request], chunk.tokens);
}

void StepRunner::Decode(const std::vector<ActiveRequest*>& batch) {
  decode_slots_.clear();
  decode_inputs_.clear();
  for (const ActiveRequest* request : batch) {
    decode_slots_.push_back(request->slot());
    decode_inputs_.push_back(*request->next_input());
  }
  if (sample_on_device_ && AllSampleOnDevice(batch)) {
    // Only the ids cross to the host.
    decode_tokens_.assign(batch.size(), -1);
    RunDecodeCall(
        batch,
        [&] {
          return model_.StepAndSample(arena_, decode_slots_, decode_inputs_, decode_sampling_,
                                      decode_tokens_);
        },
        [&](size_t i, absl::Time end) {
          HandleOutcome(*batch[i], batch[i]->AcceptSampled(decode_tokens_[i]), end);
        });
  } else {
    const size_t vocab = static_cast<size_t>(model_.config().vocab_size);
    decode_logits_.resize(batch.size() * vocab);
    RunDecodeCall(
        batch, [&] { return model_.Step(arena_, decode_slots_, decode_inputs_, decode_logits_); },
        [&](size_t i, absl::Time end) {
          HandleLogits(*batch[i], std::span<float>(decode_logits_).subspan(i * vocab, vocab), end);
        });
  }
}

bool StepRunner::AllSampleOnDevice(const std::vector<ActiveRequest*>& batch) {
  decode_sampling_.clear();
  for (const ActiveRequest* request : batch) {
    std::optional<models::TokenSampling> sampling = request->DeviceSampling();
    if (!sampling) return false;
    decode_sampling_.push_back(*sampling);
  }
  return true;
}

template <typename Call, typename Take>
void StepRunner::RunDecodeCall(const std::vector<ActiveRequest*>& batch, Call call, Take take) {
  const absl::Time start = absl::Now();
  const absl::Status status = call();
  const absl::Time end = absl::Now();
  observer_.OnStep(StepPhase::kDecode, static_cast<int>(batch.size()), end - start);
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!status.ok()) {
      finisher_.Finish(*batch[i], FinishReason::kCancelled, ModelError("decode step", status));
      continue;
    }
    take(i, end);
  }
}

void StepRunner::Prefill(ActiveRequest& request, int tokens) {
  prefill_logits_.resize(static_cast<size_t>(model_.config().vocab_size));
  const absl::Time start = absl::Now();
  const absl::Status status =
      model_.Prefill(arena_, request.slot(), request.prompt_left().first(tokens),
                     models::LogitsWanted::kLastToken, prefill_logits_);
  const absl::Time end = absl::Now();
  observer_.OnStep(StepPhase::kPrefill, tokens, end - start);
  if (!status.ok()) {
    finisher_.Finish(request, FinishReason::kCancelled, ModelError("prefill", status));
    return;
  }
  request.PromptFed(tokens, end);
  if (request.prompt_done()) HandleLogits(request, prefill_logits_, end);
}

void StepRunner::HandleLogits(ActiveRequest& request, std::span<float> logits, absl::Time now) {
  HandleOutcome(request, request.SampleNext(logits), now);
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
