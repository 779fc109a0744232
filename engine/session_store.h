// Sessions (DESIGN §9): a request may keep its final state under a server-made, unguessable
// handle, and a later request naming the handle continues from it, prefilling only its new
// tokens. Because a state has a fixed size, a session costs the same after ten turns as after
// one. Bounded by bytes (least recently used first out; a session in use is never evicted) and
// by a time to live; one request per session at a time. Thread-safe: the gRPC threads look
// handles up at submission, the engine thread stores states when requests finish.
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/state_blob.h"

namespace slotserve::engine {

struct SessionStoreOptions {
  absl::Duration ttl = absl::Minutes(30);  // since the session was last stored or used
  int64_t max_bytes = int64_t{1} << 30;
};

struct SessionStoreStats {
  int64_t sessions = 0;
  int64_t bytes = 0;
  int64_t evictions = 0;    // pushed out by the memory bound
  int64_t expirations = 0;  // past their time to live
};

class SessionStore {
 public:
  explicit SessionStore(SessionStoreOptions options);

  // Keeps `state` under a new handle ("ss-" and 32 hex digits: 128 random bits) and returns
  // it; RESOURCE_EXHAUSTED when the state alone is larger than the whole bound.
  absl::StatusOr<std::string> Create(RequestState state, absl::Time now);

  // Hands the session's state to one request: NOT_FOUND for an unknown or expired handle,
  // FAILED_PRECONDITION while another request holds it. Every Acquire must be followed by
  // one Release.
  absl::StatusOr<RequestState> Acquire(absl::string_view handle, absl::Time now);
  // Ends a request's hold: with the state it ended in (the session moves on), or with
  // nullopt (the request failed: the session keeps the state it had).
  void Release(absl::string_view handle, std::optional<RequestState> state, absl::Time now);

  // A copy of the session's state without holding it (export): NOT_FOUND as Acquire.
  absl::StatusOr<RequestState> Peek(absl::string_view handle, absl::Time now);
  // Forgets a session; NOT_FOUND when unknown, FAILED_PRECONDITION while in use.
  absl::Status Remove(absl::string_view handle, absl::Time now);

  SessionStoreStats stats() const;

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
