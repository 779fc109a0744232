// Executes one engine step's plan (step_planner.h) on the engine thread: calls the model,
// hands each request its new token, reports the model calls' and tokens' timings to the
// observer, and ends requests whose token finishes them or whose model call failed. It owns
// the step's reusable host buffers; what is running and when requests leave is the
// scheduler's business.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "engine/active_request.h"
#include "engine/engine_observer.h"
#include "engine/generation_events.h"
#include "engine/prefix_cache.h"
#include "engine/step_latency_budget.h"
#include "engine/step_planner.h"
#include "models/language_model.h"
#include "models/sampling_columns.h"
#include "models/state_arena.h"

namespace slotserve::engine {

// How the runner ends a request: the scheduler's bookkeeping (slot, live set, observer, sink).
class RequestFinisher {
 public:
  virtual ~RequestFinisher() = default;
  virtual void Finish(ActiveRequest& request, FinishReason reason, absl::Status status) = 0;
  // A running beam search let `slot` go (a hypothesis finished or lost its place): it goes
  // back to the pool now, for other requests.
  virtual void ReleaseSlot(ActiveRequest& request, int slot) = 0;
};

class StepRunner {
 public:
  // Every reference must outlive the runner. `prefix_cache` may be null (no prefix states);
  // when given, the runner checkpoints prompts into it at block boundaries.
  StepRunner(models::LanguageModel& model, models::StateArena& arena, EngineObserver& observer,
             RequestFinisher& finisher, PrefixCache* prefix_cache = nullptr);

  // Runs `plan` (made from `running`, in the same order): the decode batch, then the prompt
  // chunks. A request whose prompt a chunk completes gets its first token from that chunk.
  // Every token is selected by the model's one selection op (StepAndSample, PrefillAndSample),
  // whatever else is in the batch.
  void Run(const StepPlan& plan, std::span<const std::unique_ptr<ActiveRequest>> running);

  // The measured costs of the model calls run so far (the step latency budget's input).
  const StepCostModel& costs() const { return costs_; }

 private:
  void Decode(std::span<ActiveRequest* const> batch);
  void Prefill(ActiveRequest& request, int tokens);
  // Feeds `tokens` (the next prompt tokens, each followed by another prompt token) asking for
  // every row's logits, and scores the tokens after them (prompt_scores.h).
  absl::Status ScorePrompt(ActiveRequest& request, std::span<const int32_t> tokens);
  // Saves the request's state into the prefix cache when its prompt so far ends at a block
  // boundary the cache does not hold yet.
  void MaybeCheckpoint(const ActiveRequest& request);
  // Hands a beam search its rows (beam_request.h), returns the slots it lets go, and when it
  // is over streams the best hypothesis as one chunk and ends the request.
  void AdvanceBeam(ActiveRequest& request, std::span<const float> raw_rows, absl::Time now);
  // Reports the time of a request's token (or beam step) to the observer.
  void ObserveTokenTime(ActiveRequest& request, absl::Time now);
  // Streams a request's new token and ends the request if due.
  void HandleOutcome(ActiveRequest& request, const ActiveRequest::TokenOutcome& outcome,
                     absl::Time now);
  // Row *next_row of `raw_logits` (vocab floats) when `wanted`, advancing *next_row; else
  // empty.
  std::span<const float> RawRows(std::span<const float> raw_logits, bool wanted,
                                 size_t* next_row) const;

  models::LanguageModel& model_;
  models::StateArena& arena_;
  EngineObserver& observer_;
  RequestFinisher& finisher_;
  PrefixCache* const prefix_cache_;
  const size_t vocab_;
  StepCostModel costs_;
  // Reused every step, so a step allocates nothing once the batch size settled.
  std::vector<ActiveRequest*> decode_batch_;
  std::vector<int> decode_rows_;  // rows of each request of decode_batch_
  std::vector<int32_t> decode_slots_;
  std::vector<int32_t> decode_inputs_;
  models::SamplingColumns decode_sampling_;
  models::SamplingColumns prefill_sampling_;  // the row of a prompt's first token
  std::vector<int32_t> decode_tokens_;
  std::vector<float> raw_logits_;  // the raw rows of the requests that want logprobs
  std::vector<float> prefill_logits_;
};

}  // namespace slotserve::engine
