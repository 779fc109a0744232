// The session side of a request's end, on the engine thread while the request still holds its
// slot: keeps the final state when the request asked and succeeded, and releases the hold of a
// continued session in every case.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "engine/active_request.h"
#include "engine/engine_observer.h"
#include "engine/session_store.h"
#include "models/state_arena.h"

namespace slotserve::engine {

// Keeps the request's final state when it asked (session.keep) and `succeeded`: under its
// handle, or under a new one; returns the handle the answer carries (empty: none). A continued
// session is released in every case (with no new state when nothing is kept: it keeps its old
// one). A store that cannot keep the new state (UNAVAILABLE) is the error returned.
absl::StatusOr<std::string> EndSession(const ActiveRequest& request, bool succeeded,
                                       const models::StateArena& arena, SessionStore& sessions,
                                       EngineObserver& observer);

}  // namespace slotserve::engine
