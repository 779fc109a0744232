#include "engine/in_memory_session_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/digest.h"
#include "base/status_macros.h"

namespace slotserve::engine {
namespace {

absl::Status UnknownHandle(absl::string_view handle) {
  return absl::NotFoundError(
      absl::StrCat("session \"", handle.substr(0, 64), "\" is unknown or has expired"));
}

}  // namespace

InMemorySessionStore::InMemorySessionStore(SessionStoreOptions options) : options_(options) {}

int64_t InMemorySessionStore::BytesOf(const RequestState& state) {
  return static_cast<int64_t>(state.payload.size()) + 64;  // + the handle and bookkeeping
}

absl::StatusOr<std::string> InMemorySessionStore::Create(RequestState state, absl::Time now) {
  const int64_t bytes = BytesOf(state);
  if (bytes > options_.max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("a session state of ", bytes,
                                                     " bytes is larger than --session-memory (",
                                                     options_.max_bytes, " bytes)"));
  }
  std::lock_guard lock(mu_);
  std::string handle = NewSessionHandle();
  while (sessions_.contains(handle)) handle = NewSessionHandle();
  recency_.push_front(handle);
  Session session{std::move(state), now, false, recency_.begin()};
  sessions_.emplace(handle, std::move(session));
  stats_.bytes += bytes;
  TrimLocked(now);
  return handle;
}

absl::StatusOr<InMemorySessionStore::Session*> InMemorySessionStore::FindLocked(
    absl::string_view handle, absl::Time now) {
  TrimLocked(now);
  auto it = sessions_.find(handle);
  if (it == sessions_.end()) return UnknownHandle(handle);
  return &it->second;
}

void InMemorySessionStore::TouchLocked(Session& session, absl::Time now) {
  session.last_used = now;
  recency_.splice(recency_.begin(), recency_, session.recency);
}

absl::StatusOr<RequestState> InMemorySessionStore::Acquire(absl::string_view handle,
                                                           absl::Time now) {
  std::lock_guard lock(mu_);
  SLOTSERVE_ASSIGN_OR_RETURN(Session * session, FindLocked(handle, now));
  if (session->in_use) {
    return absl::FailedPreconditionError(
        absl::StrCat("session \"", handle,
                     "\" is in use by another request; one request per session at "
                     "a time"));
  }
  session->in_use = true;
  TouchLocked(*session, now);
  return session->state;
}

absl::Status InMemorySessionStore::Release(absl::string_view handle,
                                           std::optional<RequestState> state, absl::Time now) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(handle);
  // Only Remove drops a session, and it refuses a held one.
  if (it == sessions_.end()) return absl::OkStatus();
  Session& session = it->second;
  session.in_use = false;
  if (state.has_value()) {
    stats_.bytes += BytesOf(*state) - BytesOf(session.state);
    session.state = *std::move(state);
  }
  TouchLocked(session, now);
  TrimLocked(now);
  return absl::OkStatus();
}

absl::StatusOr<RequestState> InMemorySessionStore::Peek(absl::string_view handle, absl::Time now) {
  std::lock_guard lock(mu_);
  SLOTSERVE_ASSIGN_OR_RETURN(Session * session, FindLocked(handle, now));
  return session->state;
}

absl::Status InMemorySessionStore::Remove(absl::string_view handle, absl::Time now) {
  std::lock_guard lock(mu_);
  SLOTSERVE_ASSIGN_OR_RETURN(Session * session, FindLocked(handle, now));
  if (session->in_use) {
    return absl::FailedPreconditionError(
        absl::StrCat("session \"", handle, "\" is in use by a request"));
  }
  stats_.bytes -= BytesOf(session->state);
  recency_.erase(session->recency);
  sessions_.erase(sessions_.find(handle));
  stats_.sessions = static_cast<int64_t>(sessions_.size());
  return absl::OkStatus();
}

void InMemorySessionStore::TrimLocked(absl::Time now) {
  // Oldest first: expired ones, then idle ones while over the bound.
  for (auto it = recency_.end(); it != recency_.begin();) {
    --it;
    auto found = sessions_.find(*it);
    Session& session = found->second;
    if (session.in_use) continue;
    const bool expired = now - session.last_used > options_.ttl;
    if (!expired && stats_.bytes <= options_.max_bytes) continue;
    stats_.bytes -= BytesOf(session.state);
    ++(expired ? stats_.expirations : stats_.evictions);
    sessions_.erase(found);
    it = recency_.erase(it);
  }
  stats_.sessions = static_cast<int64_t>(sessions_.size());
}

SessionStoreStats InMemorySessionStore::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace slotserve::engine
