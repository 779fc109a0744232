// The statuses a request is cut off with (Finished::status; OutcomeLabel maps their codes to
// metric labels). One place, so the queue, the step runner and the scheduler word them alike.
#pragma once

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "engine/active_request.h"

namespace slotserve::engine {

// CANCELLED: Scheduler::Cancel (the client went away).
absl::Status CancelledStatus();

// DEADLINE_EXCEEDED: the request's deadline passed at `now`, queued or running.
absl::Status DeadlineStatus(const ActiveRequest& request, absl::Time now);

// UNAVAILABLE: Scheduler::Stop ended the request.
absl::Status ShutdownStatus();

// A failed model call (`what`: "prefill", "decode step"), keeping its code (INTERNAL if none).
absl::Status ModelError(const char* what, const absl::Status& status);

}  // namespace slotserve::engine
