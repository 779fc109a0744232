// The part of the scheduler that gRPC threads touch (docs/ARCHITECTURE.md "Floors": they only
// enqueue work): the bounded queue of accepted requests waiting for a slot, the cancellations not
// yet taken in, the set of live (accepted, not finished) requests, and the draining / shut-down
// flags, all behind one mutex. The engine thread takes its work from here at the start of every
// step; everything else it owns (running requests, slots, the model) never needs this lock.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/active_request.h"
#include "engine/engine_observer.h"
#include "engine/step_planner.h"

namespace slotserve::engine {

class RequestQueue {
 public:
  // At most `max_queued` requests wait; `slots_total` is only reported in stats().
  RequestQueue(int max_queued, int slots_total);

  // --- Any thread.

  // Queues `count` requests together, or none: `make(i, id)` builds the i-th from the id it is
  // given (called under the lock, so ids follow queue order). Errors, with nothing queued:
  // UNAVAILABLE when shut down or draining, RESOURCE_EXHAUSTED unless all `count` fit below
  // max_queued. A batch of prompts is accepted or refused whole.
  absl::StatusOr<std::vector<RequestId>> EnqueueAll(
      int count, absl::FunctionRef<std::unique_ptr<ActiveRequest>(int, RequestId)> make);
  // Asks the engine to end a live request at its next step. False when the id is not live.
  bool Cancel(RequestId id);
  // Refuses new requests (UNAVAILABLE) from now on.
  void BeginDrain();
  bool draining() const;  // draining or shut down
  // Blocks until no request is live, or until `deadline`. True when idle.
  bool WaitIdle(absl::Time deadline);
  // Refuses new requests for good and wakes the engine thread to stop. True the first time.
  bool ShutDown();
  bool shut_down() const;
  SchedulerStats stats() const;

  // --- The engine thread.

  // What a step takes in.
  struct Intake {
    absl::flat_hash_set<RequestId> cancelled;  // ids Cancel named since the last step
    // Queued requests that leave without running (cancelled, or past their deadline), each
    // with the status to end it with.
    std::vector<std::pair<std::unique_ptr<ActiveRequest>, absl::Status>> dropped;
    // The front of the queue after those left, at most `free_slots` requests: admission's
    // candidates (PlanAdmission).
    std::vector<QueuedRequestView> head;
  };
  // Blocks until there is work (a cancellation, `running` requests, or a queued request and a
  // free slot), then takes it in. nullopt once shut down.
  std::optional<Intake> WaitForWork(bool running, int free_slots);
  // Removes and returns the first `count` queued requests (admitted from the last Intake's
  // head; only the engine thread removes requests, so they are still the same ones).
  std::vector<std::unique_ptr<ActiveRequest>> PopFront(int count);
  // Removes and returns every queued request (on shut-down).
  std::deque<std::unique_ptr<ActiveRequest>> TakeAll();
  // A request ended: it leaves the live set. Returns the stats after.
  SchedulerStats Retire(RequestId id);
  // A live request gave one of its slots back before its end (a beam hypothesis finished).
  // Returns the stats after.
  SchedulerStats SlotReturned(RequestId id);
  // Wakes WaitIdle callers when no request is live (after the last sink heard its end).
  void NotifyIfIdle();

 private:
  SchedulerStats StatsLocked() const;

  const int max_queued_;
  const int slots_total_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  std::deque<std::unique_ptr<ActiveRequest>> queue_;
  std::vector<RequestId> cancels_;
  // Accepted and not yet finished, with the slots each holds once admitted (SlotsNeeded, less
  // those a beam search already gave back).
  absl::flat_hash_map<RequestId, int> live_;
  int live_slots_ = 0;    // the sum of live_'s slots
  int queued_slots_ = 0;  // the part of it that queue_ holds
  RequestId next_id_ = 1;
  bool draining_ = false;
  bool shut_down_ = false;
};

}  // namespace slotserve::engine
