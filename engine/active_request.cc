#include "engine/active_request.h"

#include <algorithm>

#include "engine/token_logprobs.h"

namespace slotserve::engine {

ActiveRequest::ActiveRequest(RequestId id, GenerationRequest request,
                             std::shared_ptr<GenerationSink> sink, uint64_t seed,
                             const StopLimits& limits, const Tokenizer* tokenizer,
                             absl::Time submitted)
    : id_(id),
      tokenizer_(tokenizer),
      request_(std::move(request)),
      sink_(std::move(sink)),
      limits_(limits),
      sampler_(request_.sampling, seed, request_.prompt_ids, request_.sampling.logit_bias),
      text_(tokenizer, request_.prompt_ids, request_.stopping.stop_sequences),
      stop_token_ids_(request_.stopping.stop_token_ids.begin(),
                      request_.stopping.stop_token_ids.end()),
      masked_before_min_new_(request_.stopping.stop_token_ids),
      submitted_(submitted) {
  if (!request_.stopping.ignore_eos) {
    masked_before_min_new_.insert(masked_before_min_new_.end(), limits_.eos_ids.begin(),
                                  limits_.eos_ids.end());
  }
  if (request_.n > 1) fork_stage_ = ForkStage::kParent;
}

std::unique_ptr<ActiveRequest> ActiveRequest::MakeChoice(int index) const {
  auto choice = std::make_unique<ActiveRequest>(id_, request_, sink_, sampler_.seed() + index,
                                                limits_, tokenizer_, submitted_);
  choice->choice_index_ = index;
  choice->fork_stage_ = ForkStage::kChild;
  choice->start_position_ = start_position_;
  return choice;
}

void ActiveRequest::AttachSessionState(RequestState state) {
  start_position_ = state.token_count;
  session_state_ = std::move(state);
}

std::optional<RequestState> ActiveRequest::TakeSessionState() {
  std::optional<RequestState> state = std::move(session_state_);
  session_state_.reset();
  return state;
}

void ActiveRequest::Forked(size_t prompt_fed) {
  fork_stage_ = ForkStage::kNone;
  prompt_fed_ = prompt_fed;
}

int64_t ActiveRequest::prompt_feedable() const {
  const auto left = static_cast<int64_t>(prompt_left().size());
  switch (fork_stage_) {
    case ForkStage::kChild:
      return 0;
    case ForkStage::kParent:
      return left - 1;
    case ForkStage::kNone:
      break;
  }
  return left;
}

void ActiveRequest::Admit(int slot, absl::Time now) {
  slot_ = slot;
  admitted_ = now;
}

void ActiveRequest::PromptFed(size_t tokens, absl::Time now) {
  prompt_fed_ += tokens;
  if (prompt_done()) prefill_done_ = now;
}

void ActiveRequest::StartFromPrefix(size_t tokens) { prompt_fed_ = tokens; }

std::span<const int32_t> ActiveRequest::prompt_absorbed() const {
  return std::span<const int32_t>(request_.prompt_ids).first(prompt_fed_);
}

ActiveRequest::TokenTiming ActiveRequest::RecordTokenTime(absl::Time now) {
  TokenTiming timing;
  timing.first = !first_token_.has_value();
  timing.since = now - (timing.first ? submitted_ : *last_token_);
  if (timing.first) first_token_ = now;
  last_token_ = now;
  return timing;
}

std::vector<int> ActiveRequest::MarkFinished() {
  finished_ = true;
  std::vector<int> slots;
  if (beam_ != nullptr) {
    slots = beam_->held_slots();  // the prompt slot too until the search started
  } else if (slot_ >= 0) {
    slots.push_back(slot_);
  }
  slot_ = -1;
  return slots;
}

void ActiveRequest::HoldBeamSlots(std::vector<int> spare_slots) {
  const BeamOptions& beam = request_.beam;
  const StoppingOptions& stopping = request_.stopping;
  BeamSearchOptions options;
  options.width = static_cast<int>(beam.width);
  options.n_best = static_cast<int>(beam.n_best);
  options.length_penalty = beam.length_penalty;
  // As AcceptToken: a hypothesis ends when feeding its last token back would pass the
  // model's longest context (validation leaves at least one token of room).
  const int64_t room = limits_.max_positions - start_position_ -
                       static_cast<int64_t>(request_.prompt_ids.size()) + 1;
  options.max_length = static_cast<int>(std::min<int64_t>(limits_.max_new_tokens, room));
  options.min_length = static_cast<int>(stopping.min_new_tokens);
  if (!stopping.ignore_eos) options.eos_ids = limits_.eos_ids;
  options.stop_token_ids = stopping.stop_token_ids;
  std::vector<int> slots = {slot_};
  slots.insert(slots.end(), spare_slots.begin(), spare_slots.end());
  beam_ = std::make_unique<BeamRequest>(std::move(options), std::move(slots), tokenizer_,
                                        request_.prompt_ids);
}

BeamRequest::StepOutcome ActiveRequest::AdvanceBeam(std::span<const float> raw_rows, int vocab,
                                                    models::StateArena& arena) {
  slot_ = -1;  // the search owns every slot from its first step on
  return beam_->Advance(raw_rows, vocab, arena);
}

TokenChunk ActiveRequest::BeamResultChunk() const {
  TokenChunk chunk;
  const std::vector<BeamHypothesis> best = beam_->Results();
  if (best.empty()) return chunk;
  chunk.ids = best.front().ids;
  chunk.text = best.front().text;
  return chunk;
}

bool ActiveRequest::decoding() const {
  if (beam_ != nullptr) return beam_->started() && !beam_->done();
  return next_input_.has_value();
}

int ActiveRequest::decode_rows() const {
  if (beam_ != nullptr) return static_cast<int>(beam_->live().size());
  return 1;
}

std::span<const int32_t> ActiveRequest::prompt_left() const {
  return std::span<const int32_t>(request_.prompt_ids).subspan(prompt_fed_);
}

std::span<const int32_t> ActiveRequest::MaskedNow() const {
  if (generated_ >= request_.stopping.min_new_tokens) return {};
  return masked_before_min_new_;
}

void ActiveRequest::AddNextTokenRow(models::SamplingColumns& columns) const {
  // A beam search ranks the raw rows itself (its validated options are greedy's: the op's
  // pick is not used).
  sampler_.AddNextToken(columns, MaskedNow(), request_.logprobs.enabled || beam_ != nullptr);
}

ActiveRequest::TokenOutcome ActiveRequest::AcceptToken(int32_t token,
                                                       std::span<const float> raw_logits) {
  TokenOutcome outcome;
  const int32_t index = generated_;  // 0-based index of the token being taken
  const bool before_min_new = index < request_.stopping.min_new_tokens;
  sampler_.Accept(token);
  ++generated_;
  last_token_id_ = token;
  outcome.chunk.choice_index = choice_index_;
  outcome.chunk.ids.push_back(token);

  std::optional<FinishReason>& finish = outcome.finish;
  if (!before_min_new) {
    if (!request_.stopping.ignore_eos &&
        std::ranges::find(limits_.eos_ids, token) != limits_.eos_ids.end()) {
      finish = FinishReason::kEos;
    } else if (stop_token_ids_.contains(token)) {
      finish = FinishReason::kStopToken;
    }
  }
  GeneratedTextStream::Update update = text_.Push(token, /*stopping_allowed=*/!before_min_new);
  outcome.chunk.text = std::move(update.text);
  if (!finish && update.stop_sequence_matched) finish = FinishReason::kStopSequence;
  // Feeding this token back needs position prompt + generated - 1 < max_positions.
  const int64_t positions_needed = start_position_ +
                                   static_cast<int64_t>(request_.prompt_ids.size()) +
                                   static_cast<int64_t>(generated_);
  if (!finish &&
      (generated_ >= limits_.max_new_tokens || positions_needed > limits_.max_positions)) {
    finish = FinishReason::kLength;
  }
  if (finish && *finish != FinishReason::kStopSequence) outcome.chunk.text += text_.Finish();
  if (!finish) next_input_ = token;
  if (request_.logprobs.enabled) {
    outcome.chunk.logprobs.push_back(
        ComputeLogprobs(raw_logits, token, static_cast<int>(request_.logprobs.top_n)));
  }
  return outcome;
}

Finished ActiveRequest::MakeFinished(FinishReason reason, absl::Status status,
                                     absl::Time now) const {
  Finished finished;
  finished.choice_index = choice_index_;
  finished.reason = status.ok() ? reason : FinishReason::kCancelled;
  finished.status = std::move(status);
  finished.prompt_tokens = static_cast<int32_t>(request_.prompt_ids.size());
  finished.generated_tokens = generated_;
  finished.seed = sampler_.seed();
  if (beam_ != nullptr && finished.status.ok()) {
    finished.hypotheses = beam_->Results();
    if (!finished.hypotheses.empty()) {
      finished.generated_tokens = static_cast<int32_t>(finished.hypotheses.front().ids.size());
    }
  }
  GenerationTimings& t = finished.timings;
  t.total = now - submitted_;
  t.queue = admitted_ ? *admitted_ - submitted_ : t.total;
  if (admitted_) t.prefill = (prefill_done_ ? *prefill_done_ : now) - *admitted_;
  if (first_token_) t.first_token = *first_token_ - submitted_;
  return finished;
}

}  // namespace slotserve::engine
