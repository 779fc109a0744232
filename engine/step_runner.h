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
#include "engine/step_planner.h"
#include "models/language_model.h"
#include "models/state_arena.h"
#include "models/token_sampling.h"

namespace slotserve::engine {

// How the runner ends a request: the scheduler's bookkeeping (slot, live set, observer, sink).
class RequestFinisher {
 public:
  virtual ~RequestFinisher() = default;
  virtual void Finish(ActiveRequest& request, FinishReason reason, absl::Status status) = 0;
};

class StepRunner {
 public:
  // Every reference must outlive the runner. `sample_on_device`: decode batches whose every
  // row qualifies (ActiveRequest::DeviceSampling) are sampled by the model (StepAndSample).
  StepRunner(models::LanguageModel& model, models::StateArena& arena, EngineObserver& observer,
             RequestFinisher& finisher, bool sample_on_device);

  // Runs `plan` (made from `running`, in the same order): the decode batch, then the prompt
  // chunks. A request whose prompt a chunk completes gets its first token from that chunk.
  void Run(const StepPlan& plan, std::span<const std::unique_ptr<ActiveRequest>> running);

 private:
  void Decode(const std::vector<ActiveRequest*>& batch);
  void Prefill(ActiveRequest& request, int tokens);
  // Whether every row's token may be sampled on the device; when so, their options are in
  // decode_sampling_.
  bool AllSampleOnDevice(const std::vector<ActiveRequest*>& batch);
  // Runs one decode model call for `batch` and reports its duration, then hands row i to
  // take(i, end), or ends every row with the call's error.
  template <typename Call, typename Take>
  void RunDecodeCall(const std::vector<ActiveRequest*>& batch, Call call, Take take);
  // Samples a request's next token from its logits on the host, then as HandleOutcome.
  void HandleLogits(ActiveRequest& request, std::span<float> logits, absl::Time now);
  // Streams a request's new token and ends the request if due.
  void HandleOutcome(ActiveRequest& request, const ActiveRequest::TokenOutcome& outcome,
                     absl::Time now);

  models::LanguageModel& model_;
  models::StateArena& arena_;
  EngineObserver& observer_;
  RequestFinisher& finisher_;
  const bool sample_on_device_;
  // Reused every step, so a step allocates nothing once the batch size settled.
  std::vector<ActiveRequest*> decode_batch_;
  std::vector<int32_t> decode_slots_;
  std::vector<int32_t> decode_inputs_;
  std::vector<float> decode_logits_;
  std::vector<models::TokenSampling> decode_sampling_;
  std::vector<int32_t> decode_tokens_;
  std::vector<float> prefill_logits_;
};

}  // namespace slotserve::engine
