#include "server/redis_session_store.h"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <sys/time.h>

#include <cerrno>
#include <cstdarg>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"

namespace slotserve::server {
namespace {

constexpr absl::string_view kSessionPrefix = "slotserve:session:";
constexpr absl::string_view kLockPrefix = "slotserve:session-lock:";
// Deletes the lock only while it still holds our token: a hold that outlived lock_ttl must not
// free the hold another replica has taken since.
constexpr const char* kUnlockScript =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end "
    "return 0";
// Extends the lease while the lock still holds our token (1), else 0.
constexpr const char* kRenewScript =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], "
    "ARGV[2]) end return 0";
// The fencing check: writes the session (KEYS[2] = ARGV[2], PX ARGV[3]) and gives the lock up
// only while the lock (KEYS[1]) still holds our token (ARGV[1]); 0 when another hold took it.
constexpr const char* kWriteHeldScript =
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "redis.call('set', KEYS[2], ARGV[2], 'PX', ARGV[3]) redis.call('del', KEYS[1]) return 1 "
    "end return 0";

std::string SessionKey(absl::string_view handle) { return absl::StrCat(kSessionPrefix, handle); }
std::string LockKey(absl::string_view handle) { return absl::StrCat(kLockPrefix, handle); }

absl::Status UnknownHandle(absl::string_view handle) {
  return absl::NotFoundError(
      absl::StrCat("session \"", handle.substr(0, 64), "\" is unknown or has expired"));
}

timeval TimevalOf(absl::Duration d) { return absl::ToTimeval(d); }

}  // namespace

class RedisSessionStore::Reply {
 public:
  explicit Reply(redisReply* reply) : reply_(reply, &freeReplyObject) {}
  bool is_nil() const { return reply_->type == REDIS_REPLY_NIL; }
  bool is_error() const { return reply_->type == REDIS_REPLY_ERROR; }
  long long integer() const { return reply_->type == REDIS_REPLY_INTEGER ? reply_->integer : 0; }
  absl::string_view text() const { return absl::string_view(reply_->str, reply_->len); }

 private:
  std::unique_ptr<redisReply, void (*)(void*)> reply_;
};

absl::StatusOr<RedisAddress> ParseRedisAddress(absl::string_view url) {
  const absl::string_view given = url;  // url loses its scheme below
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("--session-store=", given, ": ", why, " (expected redis://host:port)"));
  };
  if (!absl::ConsumePrefix(&url, "redis://")) return bad("not a redis:// address");
  RedisAddress address;
  address.text = absl::StrCat("redis://", url);
  absl::string_view host = url;
  if (const size_t colon = url.rfind(':'); colon != absl::string_view::npos) {
    host = url.substr(0, colon);
    if (!absl::SimpleAtoi(url.substr(colon + 1), &address.port) || address.port <= 0 ||
        address.port > 65535) {
      return bad(absl::StrCat("port \"", url.substr(colon + 1), "\" is not in 1..65535"));
    }
  }
  if (host.empty() || host.find('/') != absl::string_view::npos) {
    return bad(absl::StrCat("host \"", host, "\" is empty or has a path"));
  }
  address.host = std::string(host);
  return address;
}

RedisSessionStore::RedisSessionStore(RedisSessionStoreOptions options)
    : options_(std::move(options)), renewer_([this] { RenewLeases(); }) {}

RedisSessionStore::~RedisSessionStore() {
  {
    std::lock_guard lock(holds_mu_);
    stopping_ = true;
  }
  renew_cv_.notify_all();
  renewer_.join();
  if (connection_ != nullptr) redisFree(connection_);
}

void RedisSessionStore::RenewLeases() {
  const std::string lease_ms = absl::StrCat(absl::ToInt64Milliseconds(options_.lease));
  std::unique_lock lock(holds_mu_);
  while (!renew_cv_.wait_for(lock, absl::ToChronoMilliseconds(options_.lease / 3),
                             [&] { return stopping_; })) {
    std::vector<std::pair<std::string, std::string>> held;  // handle, token
    for (const auto& [handle, hold] : holds_) held.emplace_back(handle, hold.token);
    lock.unlock();
    for (const auto& [handle, token] : held) {
      // A renewal that fails or finds the lock gone changes nothing here: the final write's
      // fencing check refuses a state whose lease was lost.
      const std::string lock_key = LockKey(handle);
      Command(absl::StrCat("renewing the lease of session ", handle),
              Retry::kOnceOnAClosedConnection, "EVAL %s 1 %b %b %s", kRenewScript, lock_key.data(),
              lock_key.size(), token.data(), token.size(), lease_ms.c_str())
          .IgnoreError();
    }
    lock.lock();
  }
}

absl::Status RedisSessionStore::Unavailable(absl::string_view what) const {
  return absl::UnavailableError(absl::StrCat("session store ", options_.address.text, ": ", what));
}

absl::Status RedisSessionStore::ConnectLocked(absl::string_view operation) {
  if (connection_ != nullptr) return absl::OkStatus();
  redisContext* context = redisConnectWithTimeout(
      options_.address.host.c_str(), options_.address.port, TimevalOf(options_.io_timeout));
  if (context == nullptr) return Unavailable("cannot allocate a connection");
  if (context->err != 0) {
    const bool timed_out = context->err == REDIS_ERR_IO &&
                           (errno == EAGAIN || errno == ETIMEDOUT || errno == EINPROGRESS);
    const std::string reason = context->errstr;
    redisFree(context);
    return Unavailable(absl::StrCat(
        operation, ": cannot connect",
        timed_out
            ? absl::StrCat(" (timed out after ", absl::FormatDuration(options_.io_timeout), ")")
            : "",
        ": ", reason));
  }
  if (redisSetTimeout(context, TimevalOf(options_.io_timeout)) != REDIS_OK) {
    redisFree(context);
    return Unavailable("cannot set the command timeout");
  }
  connection_ = context;
  return absl::OkStatus();
}

void RedisSessionStore::DropIfClosedLocked() {
  if (connection_ == nullptr) return;
  // Every reply is read in full, so an idle connection has nothing to read unless Redis
  // closed it (end of file) or it broke.
  pollfd descriptor{.fd = connection_->fd, .events = POLLIN, .revents = 0};
  if (poll(&descriptor, 1, /*timeout=*/0) != 0) {
    redisFree(connection_);
    connection_ = nullptr;
  }
}

absl::StatusOr<RedisSessionStore::Reply> RedisSessionStore::Command(absl::string_view operation,
                                                                    Retry retry, const char* format,
                                                                    ...) {
  std::lock_guard lock(connection_mu_);
  for (int attempt = 1;; ++attempt) {
    DropIfClosedLocked();
    SLOTSERVE_RETURN_IF_ERROR(ConnectLocked(operation));
    va_list args;
    va_start(args, format);
    void* raw = redisvCommand(connection_, format, args);
    const int error_number = errno;
    va_end(args);
    if (raw != nullptr) {
      Reply reply(static_cast<redisReply*>(raw));
      if (reply.is_error()) {
        return Unavailable(absl::StrCat(operation, ": Redis said: ", reply.text()));
      }
      return reply;
    }
    // The connection is unusable after an I/O error or timeout: the next command reconnects.
    const int error = connection_->err;
    const std::string reason = connection_->errstr[0] != '\0' ? connection_->errstr : "no reply";
    redisFree(connection_);
    connection_ = nullptr;
    const bool timed_out =
        error == REDIS_ERR_IO && (error_number == EAGAIN || error_number == ETIMEDOUT);
    const bool closed =
        error == REDIS_ERR_EOF ||
        (error == REDIS_ERR_IO && (error_number == ECONNRESET || error_number == EPIPE));
    if (closed && retry == Retry::kOnceOnAClosedConnection && attempt == 1) continue;
    return Unavailable(absl::StrCat(
        operation,
        timed_out ? absl::StrCat(": timed out after ", absl::FormatDuration(options_.io_timeout))
                  : (closed ? ": the connection was closed" : ": failed"),
        " (", reason, ")"));
  }
}

absl::Status RedisSessionStore::Ping() {
  SLOTSERVE_ASSIGN_OR_RETURN(Reply reply, Command("PING", Retry::kOnceOnAClosedConnection, "PING"));
  return absl::OkStatus();
}

absl::Status RedisSessionStore::WriteNew(absl::string_view handle,
                                         const engine::RequestState& state) {
  const std::vector<uint8_t> blob =
      engine::ExportStateBlob(state, options_.identity, options_.state_key);
  const std::string key = SessionKey(handle);
  const std::string ttl_ms = absl::StrCat(absl::ToInt64Milliseconds(options_.ttl));
  // Not repeated on a closed connection: a second SET NX could find the first's key.
  SLOTSERVE_ASSIGN_OR_RETURN(
      Reply reply,
      Command(absl::StrCat("storing new session ", handle), Retry::kNever, "SET %b %b PX %s NX",
              key.data(), key.size(), blob.data(), blob.size(), ttl_ms.c_str()));
  if (reply.is_nil()) {
    return absl::AlreadyExistsError(absl::StrCat("session \"", handle, "\" exists already"));
  }
  return absl::OkStatus();
}

absl::Status RedisSessionStore::WriteHeld(absl::string_view handle,
                                          const engine::RequestState& state,
                                          absl::string_view token) {
  const std::vector<uint8_t> blob =
      engine::ExportStateBlob(state, options_.identity, options_.state_key);
  const std::string lock_key = LockKey(handle);
  const std::string key = SessionKey(handle);
  const std::string ttl_ms = absl::StrCat(absl::ToInt64Milliseconds(options_.ttl));
  SLOTSERVE_ASSIGN_OR_RETURN(
      Reply written,
      Command(absl::StrCat("storing session ", handle), Retry::kOnceOnAClosedConnection,
              "EVAL %s 2 %b %b %b %b %s", kWriteHeldScript, lock_key.data(), lock_key.size(),
              key.data(), key.size(), token.data(), token.size(), blob.data(), blob.size(),
              ttl_ms.c_str()));
  if (written.integer() == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "session \"", handle, "\" in ", options_.address.text, ": this replica lost its ",
        absl::FormatDuration(options_.lease),
        " lease on it (the store was unreachable too long), so another request may have "
        "moved it on; this request's final state was not kept"));
  }
  return absl::OkStatus();
}

absl::StatusOr<engine::RequestState> RedisSessionStore::Read(absl::string_view handle) {
  const std::string key = SessionKey(handle);
  SLOTSERVE_ASSIGN_OR_RETURN(
      Reply reply, Command(absl::StrCat("reading session ", handle),
                           Retry::kOnceOnAClosedConnection, "GET %b", key.data(), key.size()));
  if (reply.is_nil()) return UnknownHandle(handle);
  const absl::string_view blob = reply.text();
  absl::StatusOr<engine::RequestState> state =
      engine::ImportStateBlob(std::span(reinterpret_cast<const uint8_t*>(blob.data()), blob.size()),
                              options_.identity, options_.state_key);
  if (!state.ok()) {
    // Another model's replica (or another --state-key) wrote it: refuse, saying so.
    return absl::FailedPreconditionError(
        absl::StrCat("session \"", handle, "\" in ", options_.address.text,
                     " cannot be continued by this server: ", state.status().message()));
  }
  return state;
}

absl::StatusOr<std::string> RedisSessionStore::Create(engine::RequestState state,
                                                      absl::Time /*now*/) {
  for (;;) {
    std::string handle = engine::NewSessionHandle();
    const absl::Status written = WriteNew(handle, state);
    if (written.ok()) return handle;
    if (!absl::IsAlreadyExists(written)) return written;  // 2^-128: draw again
  }
}

absl::StatusOr<engine::RequestState> RedisSessionStore::Acquire(absl::string_view handle,
                                                                absl::Time /*now*/) {
  const std::string lock_key = LockKey(handle);
  const std::string token = engine::NewSessionHandle();
  const std::string lock_ms = absl::StrCat(absl::ToInt64Milliseconds(options_.lease));
  SLOTSERVE_ASSIGN_OR_RETURN(
      Reply locked,
      Command(absl::StrCat("locking session ", handle), Retry::kNever, "SET %b %b NX PX %s",
              lock_key.data(), lock_key.size(), token.data(), token.size(), lock_ms.c_str()));
  if (locked.is_nil()) {
    const std::string key = SessionKey(handle);
    SLOTSERVE_ASSIGN_OR_RETURN(Reply exists, Command(absl::StrCat("looking up session ", handle),
                                                     Retry::kOnceOnAClosedConnection, "EXISTS %b",
                                                     key.data(), key.size()));
    if (exists.integer() == 0) return UnknownHandle(handle);
    return absl::FailedPreconditionError(
        absl::StrCat("session \"", handle,
                     "\" is in use by another request (on this or another replica); one "
                     "request per session at a time"));
  }
  absl::StatusOr<engine::RequestState> state = Read(handle);
  if (state.ok()) {
    const std::string key = SessionKey(handle);
    const std::string ttl_ms = absl::StrCat(absl::ToInt64Milliseconds(options_.ttl));
    absl::StatusOr<Reply> touched =
        Command(absl::StrCat("renewing session ", handle), Retry::kOnceOnAClosedConnection,
                "PEXPIRE %b %s", key.data(), key.size(), ttl_ms.c_str());
    if (!touched.ok()) state = touched.status();
  }
  if (!state.ok()) {
    Command(absl::StrCat("unlocking session ", handle), Retry::kOnceOnAClosedConnection,
            "EVAL %s 1 %b %b", kUnlockScript, lock_key.data(), lock_key.size(), token.data(),
            token.size())
        .IgnoreError();  // unreachable Redis: the lock expires by itself
    return state.status();
  }
  std::lock_guard lock(holds_mu_);
  holds_[handle] = Hold{token, static_cast<int64_t>(state->payload.size())};
  return state;
}

absl::Status RedisSessionStore::Release(absl::string_view handle,
                                        std::optional<engine::RequestState> state,
                                        absl::Time /*now*/) {
  Hold hold;
  {
    std::lock_guard lock(holds_mu_);
    auto it = holds_.find(handle);
    if (it == holds_.end()) return absl::OkStatus();
    hold = std::move(it->second);
    holds_.erase(it);
  }
  if (state.has_value()) return WriteHeld(handle, *state, hold.token);  // gives the lock up
  const std::string lock_key = LockKey(handle);
  absl::StatusOr<Reply> unlocked =
      Command(absl::StrCat("unlocking session ", handle), Retry::kOnceOnAClosedConnection,
              "EVAL %s 1 %b %b", kUnlockScript, lock_key.data(), lock_key.size(), hold.token.data(),
              hold.token.size());
  return unlocked.status();
}

absl::StatusOr<engine::RequestState> RedisSessionStore::Peek(absl::string_view handle,
                                                             absl::Time /*now*/) {
  return Read(handle);
}

absl::Status RedisSessionStore::Remove(absl::string_view handle, absl::Time /*now*/) {
  const std::string lock_key = LockKey(handle);
  SLOTSERVE_ASSIGN_OR_RETURN(
      Reply held,
      Command(absl::StrCat("looking up the lock of session ", handle),
              Retry::kOnceOnAClosedConnection, "EXISTS %b", lock_key.data(), lock_key.size()));
  if (held.integer() != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("session \"", handle, "\" is in use by a request"));
  }
  const std::string key = SessionKey(handle);
  SLOTSERVE_ASSIGN_OR_RETURN(
      Reply removed, Command(absl::StrCat("removing session ", handle), Retry::kNever, "DEL %b",
                             key.data(), key.size()));
  if (removed.integer() == 0) return UnknownHandle(handle);
  return absl::OkStatus();
}

engine::SessionStoreStats RedisSessionStore::stats() const {
  std::lock_guard lock(holds_mu_);
  engine::SessionStoreStats stats;
  stats.sessions = static_cast<int64_t>(holds_.size());
  for (const auto& [handle, hold] : holds_) stats.bytes += hold.bytes;
  return stats;
}

}  // namespace slotserve::server
