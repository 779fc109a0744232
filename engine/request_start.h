// What an admitted request's state slot holds before its first prompt token, on the engine
// thread: a continued session's saved state, the encoder's cross memory for a seq2seq source,
// or the longest cached prefix state of its prompt; and, for a fork (n > 1), the copy of the
// parent's state into its waiting choices once the parent's prompt is in. A failure ends the
// request through the scheduler's RequestFinisher. The scheduler decides who is admitted and
// when; this file only fills slots.
#pragma once

#include <memory>
#include <span>

#include "engine/active_request.h"
#include "engine/engine_observer.h"
#include "engine/prefix_cache.h"
#include "engine/step_runner.h"
#include "models/language_model.h"
#include "models/state_arena.h"

namespace slotserve::engine {

class RequestStart {
 public:
  // Every reference must outlive this object; `prefix_cache` may be null (prefix states off).
  RequestStart(models::LanguageModel& model, models::StateArena& arena, EngineObserver& observer,
               RequestFinisher& finisher, PrefixCache* prefix_cache);

  // Fills the slot of a request just admitted (ActiveRequest::Admit done). False: the request
  // ended (its finisher heard why); its other slots are the caller's to give back.
  bool FillSlot(ActiveRequest& request);

  // Each fork parent in `running` with only its last prompt token left copies its state into
  // its waiting choices; from then on every choice feeds that token itself (its own first
  // token, its own seed). A choice whose copy fails ends; the caller drops finished requests.
  void ForkReadyParents(std::span<const std::unique_ptr<ActiveRequest>> running);

 private:
  bool RestoreSession(ActiveRequest& request);
  bool EncodeSource(ActiveRequest& request);
  void RestorePrefix(ActiveRequest& request);

  models::LanguageModel& model_;
  models::StateArena& arena_;
  EngineObserver& observer_;
  RequestFinisher& finisher_;
  PrefixCache* const prefix_cache_;
};

}  // namespace slotserve::engine
