// One accepted request inside the engine: its options, RNG stream, text stream, slot and
// clock readings. Owned by the scheduler (queue, then engine thread); not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "engine/beam_request.h"
#include "engine/generated_text_stream.h"
#include "engine/generation_events.h"
#include "engine/generation_request.h"
#include "engine/prompt_scores.h"
#include "engine/sampler.h"
#include "engine/state_blob.h"
#include "engine/tokenizer.h"
#include "models/sampling_columns.h"

namespace slotserve::engine {

// What the model needs to know to decide when a request must end.
struct StopLimits {
  int32_t max_new_tokens = 0;  // already resolved (0 replaced by the default)
  // The ids that end generation as eos: the model's, generation_config.json's and the
  // tokenizer's (SchedulerOptions::extra_eos_ids); empty when the model has none.
  std::vector<int32_t> eos_ids;
  int64_t max_positions = 0;  // the model's longest sequence
};

class ActiveRequest {
 public:
  ActiveRequest(RequestId id, GenerationRequest request, std::shared_ptr<GenerationSink> sink,
                uint64_t seed, const StopLimits& limits, const Tokenizer* tokenizer,
                absl::Time submitted);

  struct TokenOutcome {
    TokenChunk chunk;
    std::optional<FinishReason> finish;  // set when this token ends the request
  };
  // Appends the selection op's row for this request's next token to `columns`: its options
  // and draw, its history when a penalty reads it, the ids masked now (eos and stop tokens
  // before min_new_tokens), and whether logprobs need the raw logits.
  void AddNextTokenRow(models::SamplingColumns& columns) const;
  // Takes `token`, selected with AddNextTokenRow()'s row: advances the RNG stream and
  // history, decides whether it ends the request and what text it releases, and adds its
  // logprobs from `raw_logits` (the row's raw logits; empty unless the row wanted them). When
  // it does not end the request, the token becomes next_input().
  TokenOutcome AcceptToken(int32_t token, std::span<const float> raw_logits);
  // Text still held back when the request ends for a reason other than a stop sequence.
  std::string FinishText() { return text_.Finish(); }

  Finished MakeFinished(FinishReason reason, absl::Status status, absl::Time now) const;

  // Fork (GenerationRequest::n > 1). The request admitted from the queue is choice 0, the
  // parent: it prefills all but the last prompt token, then the scheduler copies its state
  // into its children (choices 1..n-1, made by MakeChoice and admitted with it), and every
  // choice feeds the last prompt token itself, selecting its first token with its own seed.
  enum class ForkStage {
    kNone,    // not forking (n == 1), or forked
    kParent,  // choice 0, until its state is copied into the children
    kChild,   // a choice waiting for the parent's state
  };
  ForkStage fork_stage() const { return fork_stage_; }
  int choice_index() const { return choice_index_; }
  // Choice `index` of this request: the same id, request, sink and text options, seed + index.
  std::unique_ptr<ActiveRequest> MakeChoice(int index) const;
  // The fork happened: the slot holds the prompt's first `prompt_fed` tokens.
  void Forked(size_t prompt_fed);
  // Prompt tokens the step may feed now: none for a waiting child, all but the last for a
  // parent (the fork point), else prompt_left().
  int64_t prompt_feedable() const;

  // Beam search (request().beam.enabled()): the scheduler admitted the request with its prompt
  // slot (Admit) and gives it the other width - 1 (HoldBeamSlots). Its prompt is prefilled as
  // any other; the prompt's last row starts the search (AdvanceBeam), which then owns every
  // slot: slot() is -1 from then on, and MarkFinished gives back whatever the search holds.
  void HoldBeamSlots(std::vector<int> spare_slots);
  BeamRequest* beam() const { return beam_.get(); }
  // One step of the search from its rows' raw logits (beam_request.h).
  BeamRequest::StepOutcome AdvanceBeam(std::span<const float> raw_rows, int vocab,
                                       models::StateArena& arena);
  // The search is over: the best hypothesis's ids and text as the request's one chunk.
  TokenChunk BeamResultChunk() const;

  // Sessions: a request continuing a session carries the session's state from Submit until
  // admission restores it into the slot (TakeSessionState); its prompt_ids already start with
  // the session's pending token. Positions count from the state's token_count.
  void AttachSessionState(RequestState state);
  std::optional<RequestState> TakeSessionState();
  bool continues_session() const { return !request_.session.handle.empty(); }
  // A new seq2seq request: its source is encoded at admission, and its slot is never a prefix
  // state (the cross memory depends on the source).
  bool has_source() const { return !request_.source_ids.empty(); }

  RequestId id() const { return id_; }
  const GenerationRequest& request() const { return request_; }
  GenerationSink& sink() const { return *sink_; }
  // The sink itself, for an end delivered after the request is gone (session_writer.h).
  std::shared_ptr<GenerationSink> shared_sink() const { return sink_; }

  // Lifecycle, in order. Only the engine thread calls these (the scheduler and its step
  // runner); the clock readings end up in MakeFinished's timings.
  // Holds `slot` from `now` on.
  void Admit(int slot, absl::Time now);
  // `tokens` more prompt tokens were fed, the model call ending at `now`.
  void PromptFed(size_t tokens, absl::Time now);
  // The slot was restored from a prefix state holding the prompt's first `tokens` tokens
  // (fewer than the whole prompt); prefill goes on from there. Right after Admit only.
  void StartFromPrefix(size_t tokens);
  // A token was handed to the request at `now`: how long after Submit when it is the first
  // (time to first token), else how long after the previous token (inter-token latency).
  struct TokenTiming {
    bool first = false;
    absl::Duration since;
  };
  TokenTiming RecordTokenTime(absl::Time now);
  // Marks the request ended and gives up its slots: returns the slots it held (one, a beam
  // search's, or none), for the caller to release. Once only: check finished() first.
  std::vector<int> MarkFinished();

  absl::Time submitted() const { return submitted_; }
  int slot() const { return slot_; }  // -1 while queued and once finished
  bool finished() const { return finished_; }

  // Prompt progress (prefill).
  std::span<const int32_t> prompt_left() const;
  bool prompt_done() const { return prompt_fed_ == request_.prompt_ids.size(); }
  size_t prompt_fed() const { return prompt_fed_; }
  // The prompt tokens fed so far (the prefix the slot's state has absorbed).
  std::span<const int32_t> prompt_absorbed() const;

  // The token the next decode step feeds; nullopt while prefilling (and for a beam search,
  // whose hypotheses feed their own: beam()->live()).
  std::optional<int32_t> next_input() const { return next_input_; }
  // Past its prompt: the next decode step has rows for it (decode_rows() of them: one, or a
  // beam search's live hypotheses).
  bool decoding() const;
  int decode_rows() const;
  int32_t generated() const { return generated_; }
  // The last token generated (never fed to the state); -1 before the first.
  int32_t last_token() const { return last_token_id_; }

  // The prompt's scores (LogprobOptions::prompt), gathered while it is prefilled.
  PromptScores& prompt_scores() { return prompt_scores_; }

 private:
  // The ids the next token may not be (empty once min_new_tokens is reached).
  std::span<const int32_t> MaskedNow() const;

  RequestId id_;
  int choice_index_ = 0;
  ForkStage fork_stage_ = ForkStage::kNone;
  const Tokenizer* tokenizer_;
  GenerationRequest request_;
  std::shared_ptr<GenerationSink> sink_;
  StopLimits limits_;
  RequestSampler sampler_;
  GeneratedTextStream text_;
  absl::flat_hash_set<int32_t> stop_token_ids_;
  std::vector<int32_t> masked_before_min_new_;  // eos (unless ignored) and stop token ids
  std::optional<RequestState> session_state_;
  std::unique_ptr<BeamRequest> beam_;  // beam search only
  PromptScores prompt_scores_;
  int64_t start_position_ = 0;  // tokens in the state before the prompt (a session's)
  size_t prompt_fed_ = 0;
  int32_t generated_ = 0;
  int32_t last_token_id_ = -1;
  std::optional<int32_t> next_input_;
  int slot_ = -1;
  bool finished_ = false;
  absl::Time submitted_;
  std::optional<absl::Time> admitted_, prefill_done_, first_token_, last_token_;
};

}  // namespace slotserve::engine
