#include "engine/session_end.h"

#include <optional>
#include <utility>

namespace slotserve::engine {

absl::StatusOr<std::string> EndSession(const ActiveRequest& request, bool succeeded,
                                       const models::StateArena& arena, SessionStore& sessions,
                                       EngineObserver& observer) {
  const SessionOptions& session = request.request().session;
  if (!session.keep && session.handle.empty()) return std::string();
  const absl::Time now = absl::Now();
  std::optional<RequestState> kept;
  if (session.keep && succeeded && request.slot() >= 0 && request.last_token() >= 0) {
    RequestState state;
    state.token_count = arena.position(request.slot());
    state.pending_token = request.last_token();
    if (arena.Save(request.slot(), &state.payload).ok()) kept = std::move(state);
  }
  absl::StatusOr<std::string> handle;
  if (!session.handle.empty()) {
    const bool keeps = kept.has_value();
    const absl::Status released = sessions.Release(session.handle, std::move(kept), now);
    if (released.ok()) {
      handle = keeps ? session.handle : std::string();
    } else {
      handle = released;
    }
  } else if (kept) {
    handle = sessions.Create(*std::move(kept), now);
  }
  observer.OnSessionStats(sessions.stats());
  return handle;
}

}  // namespace slotserve::engine
