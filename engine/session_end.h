// The session side of a request's end, in two halves: on the engine thread, while the request
// still holds its slot, the final state is copied out (FinalSessionState); then, on the
// session writer's thread (session_writer.h), the store keeps it and the hold of a continued
// session ends (StoreSessionEnd).
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/active_request.h"
#include "engine/session_store.h"
#include "engine/state_blob.h"
#include "models/state_arena.h"

namespace slotserve::engine {

// Whether the request's end has a session side: it asked to keep its state, or continued one.
bool HasSessionEnd(const SessionOptions& session);

// The state to keep when the request asked (session.keep) and `succeeded`, copied out of its
// slot; nullopt when nothing is to be kept.
std::optional<RequestState> FinalSessionState(const ActiveRequest& request, bool succeeded,
                                              const models::StateArena& arena);

// Keeps `kept` (when given) under the continued session's handle or under a new one, and
// releases a continued session in every case (with no new state when nothing is kept: it
// keeps its old one). Returns the handle the answer carries ("" for none), or the store's
// error (UNAVAILABLE: the new state could not be stored).
absl::StatusOr<std::string> StoreSessionEnd(const SessionOptions& session,
                                            std::optional<RequestState> kept,
                                            SessionStore& sessions, absl::Time now);

}  // namespace slotserve::engine
