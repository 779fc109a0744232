// Hooks through which the engine reports what the metrics of the README's metrics list count. The
// service implements them (prometheus-cpp); the engine itself knows no metrics library. Every hook
// is called on the engine thread, except for the end of a request with a session side, which the
// session writer's thread reports (OnRequestFinished, OnStats, and every OnSessionStats:
// session_writer.h); so OnRequestFinished and OnStats must be thread-safe. OnStats calls never
// overlap and arrive in the order their stats were taken. Every hook must be cheap and
// non-blocking. Defaults do nothing.
#pragma once

#include <string_view>

#include "absl/time/time.h"
#include "engine/generation_events.h"
#include "engine/prefix_cache.h"
#include "engine/session_store.h"

namespace slotserve::engine {

enum class StepPhase { kPrefill, kDecode, kEncode };  // kEncode: a seq2seq source

// "prefill" or "decode".
std::string_view StepPhaseName(StepPhase phase);

// A consistent snapshot of the scheduler's occupancy.
struct SchedulerStats {
  int running = 0;      // admitted requests (holding a slot), prefilling or decoding
  int queued = 0;       // accepted, waiting for a slot
  int slots_used = 0;   // == running
  int slots_total = 0;  // SchedulerOptions::max_slots
};

class EngineObserver {
 public:
  virtual ~EngineObserver() = default;

  // A request got a slot after waiting `queue_time` since Submit.
  virtual void OnRequestAdmitted(absl::Duration /*queue_time*/) {}
  // A request's first token was sampled, `time_to_first_token` after Submit.
  virtual void OnFirstToken(absl::Duration /*time_to_first_token*/) {}
  // A request sampled another token, `latency` after its previous one.
  virtual void OnInterTokenLatency(absl::Duration /*latency*/) {}
  // A request ended (any way, after Submit accepted it). Use OutcomeLabel(finished) for the
  // outcome label, finished.prompt_tokens / generated_tokens for the token counters and
  // finished.timings.total for the request duration.
  virtual void OnRequestFinished(const Finished& /*finished*/) {}
  // One model call of an engine step: a decode step over `batch_size` requests, or one
  // prefill chunk (`batch_size` = tokens in the chunk).
  virtual void OnStep(StepPhase /*phase*/, int /*batch_size*/, absl::Duration /*duration*/) {}
  // Occupancy after every engine step and whenever the queue changes.
  virtual void OnStats(const SchedulerStats& /*stats*/) {}
  // The prefix cache's counters (running totals) after a lookup or a new checkpoint.
  virtual void OnPrefixCacheStats(const PrefixCacheStats& /*stats*/) {}
  // The session store's counters (running totals) after a request kept or gave back a session
  // (imports on gRPC threads show from the next of these on).
  virtual void OnSessionStats(const SessionStoreStats& /*stats*/) {}
};

}  // namespace slotserve::engine
