// The session store shared by replicas (--session-store redis://host:port; session_store.h):
// any replica behind a load balancer can continue any session. A session is one Redis key,
// "slotserve:session:<handle>", whose value is the state as a docs/ARCHITECTURE.md "Request state"
// blob (engine/state_blob.h: model fingerprint, kind, checksum, HMAC with --state-key), so a
// replica serving another model refuses it; it is written with the session TTL (SET ... PX)
// and its TTL is renewed whenever a request uses it. "One request per session at a time"
// holds across replicas through a lock key, "slotserve:session-lock:<handle>", taken with
// SET NX PX (a random token per hold) and deleted, only if the token is still ours, when the
// request ends in any way. The lock is a short lease (`lease`, seconds): a thread of this
// store renews every hold this replica has while its request runs, so a replica that dies
// holding a session frees it within one lease. A hold that could not be renewed in time may
// have passed to another replica: the final state is written only if the lock still holds
// our token (checked and written in one Lua script, a fencing check), so a replica that lost
// its lease never overwrites a newer state.
//
// A connection Redis dropped (CLIENT KILL, its idle `timeout`, a restart) is noticed before
// the next command and replaced, and a read that still finds its connection closed is sent
// once more on a new one, so neither fails a request while Redis is up. Redis being down or
// slow gives UNAVAILABLE naming the store, the operation, whether it timed out, and hiredis's
// reason; nothing here throws or aborts, and the scheduler releases the request's slot whatever the
// store says. Redis bounds the memory (its maxmemory), so --session-memory does not apply, and
// Redis expires and evicts keys itself: stats() reports what this replica knows, the sessions
// its requests hold right now and their bytes (DEPLOY.md, "Sessions across replicas").
//
// hiredis lives here, in the server, and not in the engine (docs/ARCHITECTURE.md "Floors"): the
// engine sees only engine::SessionStore.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/session_store.h"
#include "engine/state_blob.h"

struct redisContext;

namespace slotserve::server {

struct RedisAddress {
  std::string host;
  int port = 6379;
  std::string text;  // as given, for messages: "redis://host:port"
};

// "redis://host:port" (port optional: 6379); INVALID_ARGUMENT quoting `url` otherwise.
absl::StatusOr<RedisAddress> ParseRedisAddress(absl::string_view url);

struct RedisSessionStoreOptions {
  RedisAddress address;
  absl::Duration ttl = absl::Minutes(30);  // --session-ttl
  // How long a hold lasts without renewal: the longest a dead replica keeps a session held.
  // Renewed every lease / 3 while the request runs.
  absl::Duration lease = absl::Seconds(6);
  absl::Duration io_timeout = absl::Seconds(2);  // connecting and each command
  engine::StateBlobIdentity identity;
  std::string state_key;  // --state-key-file's key; empty: unsigned blobs
};

class RedisSessionStore final : public engine::SessionStore {
 public:
  explicit RedisSessionStore(RedisSessionStoreOptions options);
  ~RedisSessionStore() override;

  // PING: OK, or UNAVAILABLE saying why (the server logs it at start and serves anyway).
  absl::Status Ping();

  absl::StatusOr<std::string> Create(engine::RequestState state, absl::Time now) override;
  absl::StatusOr<engine::RequestState> Acquire(absl::string_view handle, absl::Time now) override;
  absl::Status Release(absl::string_view handle, std::optional<engine::RequestState> state,
                       absl::Time now) override;
  absl::StatusOr<engine::RequestState> Peek(absl::string_view handle, absl::Time now) override;
  absl::Status Remove(absl::string_view handle, absl::Time now) override;
  engine::SessionStoreStats stats() const override;

 private:
  class Reply;
  // Whether a command may be sent twice: a read, or a write of the same value.
  enum class Retry { kNever, kOnceOnAClosedConnection };
  // One command on the shared connection (a new one when Redis closed it): its reply, or
  // UNAVAILABLE naming `operation` ("reading session ss-..."), whether it timed out, and the
  // reason. `format` is hiredis's (%s text, %b binary).
  absl::StatusOr<Reply> Command(absl::string_view operation, Retry retry, const char* format, ...);
  absl::Status ConnectLocked(absl::string_view operation);
  // Drops the connection when Redis closed it while idle (it is readable: end of file).
  void DropIfClosedLocked();
  absl::Status Unavailable(absl::string_view what) const;
  absl::StatusOr<engine::RequestState> Read(absl::string_view handle);
  // A new session's state (SET NX): ALREADY_EXISTS when the handle is taken.
  absl::Status WriteNew(absl::string_view handle, const engine::RequestState& state);
  // The final state of a held session, written only while the lock holds `token`, which it
  // then gives up; FAILED_PRECONDITION when the lease was lost.
  absl::Status WriteHeld(absl::string_view handle, const engine::RequestState& state,
                         absl::string_view token);
  // The renewal thread: every lease / 3, extends the lease of every hold this replica has.
  void RenewLeases();

  const RedisSessionStoreOptions options_;
  // Guards the connection: one command at a time (hiredis contexts are not thread-safe).
  std::mutex connection_mu_;
  redisContext* connection_ = nullptr;
  // Sessions this replica's requests hold: handle -> lock token and state bytes.
  mutable std::mutex holds_mu_;
  struct Hold {
    std::string token;
    int64_t bytes = 0;
  };
  absl::flat_hash_map<std::string, Hold> holds_;
  std::condition_variable renew_cv_;  // with holds_mu_: wakes the renewal thread to stop
  bool stopping_ = false;
  std::thread renewer_;
};

}  // namespace slotserve::server
