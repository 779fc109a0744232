// The embedded session store (session_store.h): states in this process's memory, bounded by
// bytes (least recently used first out; a session in use is never evicted) and by a time to
// live. The default; sessions are then seen only by the replica that made them.
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "engine/session_store.h"

namespace slotserve::engine {

class InMemorySessionStore final : public SessionStore {
 public:
  explicit InMemorySessionStore(SessionStoreOptions options);

  absl::StatusOr<std::string> Create(RequestState state, absl::Time now) override;
  absl::StatusOr<RequestState> Acquire(absl::string_view handle, absl::Time now) override;
  absl::Status Release(absl::string_view handle, std::optional<RequestState> state,
                       absl::Time now) override;
  absl::StatusOr<RequestState> Peek(absl::string_view handle, absl::Time now) override;
  absl::Status Remove(absl::string_view handle, absl::Time now) override;
  SessionStoreStats stats() const override;

 private:
  struct Session {
    RequestState state;
    absl::Time last_used;
    bool in_use = false;
    std::list<std::string>::iterator recency;
  };
  static int64_t BytesOf(const RequestState& state);
  // *Locked: mu_ held. Drops expired sessions and, while over the bound, the least recently used
  // idle ones.
  void TrimLocked(absl::Time now);
  absl::StatusOr<Session*> FindLocked(absl::string_view handle, absl::Time now);
  void TouchLocked(Session& session, absl::Time now);

  const SessionStoreOptions options_;
  // std::mutex, not absl::Mutex: ThreadSanitizer sees std::mutex through pthreads, but not
  // Debian's uninstrumented absl::Mutex. Guards everything below.
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, Session> sessions_;
  std::list<std::string> recency_;  // most recently used first
  SessionStoreStats stats_;
};

}  // namespace slotserve::engine
