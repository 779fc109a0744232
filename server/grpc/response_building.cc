#include "server/grpc/response_building.h"

#include "absl/time/time.h"

namespace slotserve::server {

v1::FinishReason ToProtoFinishReason(engine::FinishReason reason) {
  switch (reason) {
    case engine::FinishReason::kLength:
      return v1::FINISH_REASON_LENGTH;
    case engine::FinishReason::kEos:
    case engine::FinishReason::kStopToken:  // the API has no separate reason for stop ids
      return v1::FINISH_REASON_EOS;
    case engine::FinishReason::kStopSequence:
      return v1::FINISH_REASON_STOP_SEQUENCE;
    case engine::FinishReason::kCancelled:
      return v1::FINISH_REASON_CANCELLED;
  }
  return v1::FINISH_REASON_UNSPECIFIED;
}

void AppendLogprobs(const std::vector<engine::GeneratedTokenLogprobs>& tokens,
                    google::protobuf::RepeatedPtrField<v1::TokenLogprob>* logprobs) {
  for (const engine::GeneratedTokenLogprobs& generated : tokens) {
    v1::TokenLogprob* entry = logprobs->Add();
    entry->set_id(generated.chosen.id);
    entry->set_logprob(generated.chosen.logprob);
    for (const engine::TokenLogprob& alternative : generated.top) {
      v1::TopLogprob* top = entry->add_top();
      top->set_id(alternative.id);
      top->set_logprob(alternative.logprob);
    }
  }
}

void AppendChunk(const engine::TokenChunk& chunk, v1::Tokens* tokens) {
  tokens->set_choice_index(static_cast<uint32_t>(chunk.choice_index));
  tokens->mutable_ids()->Add(chunk.ids.begin(), chunk.ids.end());
  tokens->mutable_text()->append(chunk.text);
  AppendLogprobs(chunk.logprobs, tokens->mutable_logprobs());
  if (chunk.prompt_logprobs.has_value()) {
    AppendLogprobs(*chunk.prompt_logprobs, tokens->mutable_prompt_logprobs());
  }
}

void FillFinished(const engine::Finished& finished, const std::string& request_id,
                  v1::Finished* proto) {
  proto->set_finish_reason(ToProtoFinishReason(finished.reason));
  proto->set_prompt_tokens(static_cast<uint32_t>(finished.prompt_tokens));
  proto->set_generated_tokens(static_cast<uint32_t>(finished.generated_tokens));
  proto->set_seed(finished.seed);
  proto->set_request_id(request_id);
  proto->set_choice_index(static_cast<uint32_t>(finished.choice_index));
  proto->set_session_handle(finished.session_handle);
  for (const engine::BeamHypothesis& hypothesis : finished.hypotheses) {
    v1::Hypothesis* entry = proto->add_hypotheses();
    entry->mutable_ids()->Add(hypothesis.ids.begin(), hypothesis.ids.end());
    entry->set_text(hypothesis.text);
    entry->set_score(hypothesis.score);
    entry->set_logprob_sum(hypothesis.logprob_sum);
    entry->set_finish_reason(ToProtoFinishReason(hypothesis.reason));
  }
  v1::Timings* timings = proto->mutable_timings();
  timings->set_queue_seconds(absl::ToDoubleSeconds(finished.timings.queue));
  timings->set_prefill_seconds(absl::ToDoubleSeconds(finished.timings.prefill));
  timings->set_first_token_seconds(absl::ToDoubleSeconds(finished.timings.first_token));
  timings->set_total_seconds(absl::ToDoubleSeconds(finished.timings.total));
}

}  // namespace slotserve::server
