#include "engine/session_end.h"

#include <utility>

namespace slotserve::engine {

bool HasSessionEnd(const SessionOptions& session) {
  return session.keep || !session.handle.empty();
}

std::optional<RequestState> FinalSessionState(const ActiveRequest& request, bool succeeded,
                                              const models::StateArena& arena) {
  if (!request.request().session.keep || !succeeded || request.slot() < 0 ||
      request.last_token() < 0) {
    return std::nullopt;
  }
  RequestState state;
  state.token_count = arena.position(request.slot());
  state.pending_token = request.last_token();
  if (!arena.Save(request.slot(), &state.payload).ok()) return std::nullopt;
  return state;
}

absl::StatusOr<std::string> StoreSessionEnd(const SessionOptions& session,
                                            std::optional<RequestState> kept,
                                            SessionStore& sessions, absl::Time now) {
  if (!session.handle.empty()) {
    const bool keeps = kept.has_value();
    const absl::Status released = sessions.Release(session.handle, std::move(kept), now);
    if (!released.ok()) return released;
    return keeps ? session.handle : std::string();
  }
  if (kept) return sessions.Create(*std::move(kept), now);
  return std::string();
}

}  // namespace slotserve::engine
