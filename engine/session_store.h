// Sessions (docs/ARCHITECTURE.md "Request state"): a request may keep its final state under a
// server-made, unguessable handle, and a later request naming the handle continues from it,
// prefilling only its new tokens. Because a state has a fixed size, a session costs the same after
// ten turns as after one. This is the store's contract; where the states live is the
// implementation's business: in this process (in_memory_session_store.h, the default) or in a store
// shared by several replicas (server/redis_session_store.h, --session-store redis://host:port).
// Implementations are thread-safe: the gRPC threads look handles up at submission, the session
// writer (session_writer.h) stores states when requests finish.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/state_blob.h"

namespace slotserve::engine {

struct SessionStoreOptions {
  absl::Duration ttl = absl::Minutes(30);  // since the session was last stored or used
  int64_t max_bytes = int64_t{1} << 30;
};

// What the slotserve_session* metrics report. For a store shared by replicas, what this
// replica sees (the implementation's header says exactly what).
struct SessionStoreStats {
  int64_t sessions = 0;
  int64_t bytes = 0;
  int64_t evictions = 0;    // pushed out by the memory bound
  int64_t expirations = 0;  // past their time to live
};

// A new handle: "ss-" and 32 hex digits, 128 bits from the kernel's CSPRNG (unguessable).
std::string NewSessionHandle();

class SessionStore {
 public:
  virtual ~SessionStore() = default;

  // Keeps `state` under a new handle and returns it; RESOURCE_EXHAUSTED when the state alone
  // is larger than the whole bound; UNAVAILABLE when a shared store cannot be reached.
  virtual absl::StatusOr<std::string> Create(RequestState state, absl::Time now) = 0;

  // Hands the session's state to one request: NOT_FOUND for an unknown or expired handle,
  // FAILED_PRECONDITION while another request (of any replica) holds it, UNAVAILABLE when a
  // shared store cannot be reached. Every successful Acquire must be followed by one Release.
  virtual absl::StatusOr<RequestState> Acquire(absl::string_view handle, absl::Time now) = 0;
  // Ends a request's hold: with the state it ended in (the session moves on), or with
  // nullopt (the request failed: the session keeps the state it had). The hold ends even when
  // this returns an error (UNAVAILABLE: the new state could not be stored).
  virtual absl::Status Release(absl::string_view handle, std::optional<RequestState> state,
                               absl::Time now) = 0;

  // A copy of the session's state without holding it (export): NOT_FOUND as Acquire.
  virtual absl::StatusOr<RequestState> Peek(absl::string_view handle, absl::Time now) = 0;
  // Forgets a session; NOT_FOUND when unknown, FAILED_PRECONDITION while in use.
  virtual absl::Status Remove(absl::string_view handle, absl::Time now) = 0;

  virtual SessionStoreStats stats() const = 0;
};

}  // namespace slotserve::engine
