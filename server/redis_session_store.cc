#include "server/redis_session_store.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

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
    : options_(std::move(options)) {}

RedisSessionStore::~RedisSessionStore() {
  if (connection_ != nullptr) redisFree(connection_);
}

absl::Status RedisSessionStore::Unavailable(absl::string_view what) const {
  return absl::UnavailableError(absl::StrCat("session store ", options_.address.text, ": ", what));
}

absl::Status RedisSessionStore::ConnectLocked() {
  if (connection_ != nullptr) return absl::OkStatus();
  redisContext* context = redisConnectWithTimeout(
      options_.address.host.c_str(), options_.address.port, TimevalOf(options_.io_timeout));
  if (context == nullptr) return Unavailable("cannot allocate a connection");
  if (context->err != 0) {
    const std::string reason = context->errstr;
    redisFree(context);
    return Unavailable(absl::StrCat("cannot connect: ", reason));
  }
  if (redisSetTimeout(context, TimevalOf(options_.io_timeout)) != REDIS_OK) {
    redisFree(context);
    return Unavailable("cannot set the command timeout");
  }
  connection_ = context;
  return absl::OkStatus();
}

absl::StatusOr<RedisSessionStore::Reply> RedisSessionStore::Command(const char* format, ...) {
  std::lock_guard lock(connection_mu_);
  SLOTSERVE_RETURN_IF_ERROR(ConnectLocked());
  va_list args;
  va_start(args, format);
  void* raw = redisvCommand(connection_, format, args);
  va_end(args);
  if (raw == nullptr) {
    // The connection is unusable after an I/O error or timeout: the next command reconnects.
    const std::string reason = connection_->errstr[0] != '\0' ? connection_->errstr : "no reply";
    redisFree(connection_);
    connection_ = nullptr;
    return Unavailable(reason);
  }
  Reply reply(static_cast<redisReply*>(raw));
  if (reply.is_error()) return Unavailable(absl::StrCat("Redis said: ", reply.text()));
  return reply;
}

absl::Status RedisSessionStore::Ping() {
  SLOTSERVE_ASSIGN_OR_RETURN(Reply reply, Command("PING"));
  return absl::OkStatus();
}

absl::Status RedisSessionStore::Write(absl::string_view handle, const engine::RequestState& state,
                                      bool only_new) {
  const std::vector<uint8_t> blob =
      engine::ExportStateBlob(state, options_.identity, options_.state_key);
  const std::string key = SessionKey(handle);
  const std::string ttl_ms = absl::StrCat(absl::ToInt64Milliseconds(options_.ttl));
  SLOTSERVE_ASSIGN_OR_RETURN(
      Reply reply, Command(only_new ? "SET %b %b PX %s NX" : "SET %b %b PX %s", key.data(),
                           key.size(), blob.data(), blob.size(), ttl_ms.c_str()));
  if (reply.is_nil()) {
    return absl::AlreadyExistsError(absl::StrCat("session \"", handle, "\" exists already"));
  }
  return absl::OkStatus();
}

absl::StatusOr<engine::RequestState> RedisSessionStore::Read(absl::string_view handle) {
  const std::string key = SessionKey(handle);
  SLOTSERVE_ASSIGN_OR_RETURN(Reply reply, Command("GET %b", key.data(), key.size()));
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
    const absl::Status written = Write(handle, state, /*only_new=*/true);
    if (written.ok()) return handle;
    if (!absl::IsAlreadyExists(written)) return written;  // 2^-128: draw again
  }
}

absl::StatusOr<engine::RequestState> RedisSessionStore::Acquire(absl::string_view handle,
                                                                absl::Time /*now*/) {
  const std::string lock_key = LockKey(handle);
  const std::string token = engine::NewSessionHandle();
  const std::string lock_ms = absl::StrCat(absl::ToInt64Milliseconds(options_.lock_ttl));
  SLOTSERVE_ASSIGN_OR_RETURN(
      Reply locked, Command("SET %b %b NX PX %s", lock_key.data(), lock_key.size(), token.data(),
                            token.size(), lock_ms.c_str()));
  if (locked.is_nil()) {
    const std::string key = SessionKey(handle);
    SLOTSERVE_ASSIGN_OR_RETURN(Reply exists, Command("EXISTS %b", key.data(), key.size()));
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
        Command("PEXPIRE %b %s", key.data(), key.size(), ttl_ms.c_str());
    if (!touched.ok()) state = touched.status();
  }
  if (!state.ok()) {
    Command("EVAL %s 1 %b %b", kUnlockScript, lock_key.data(), lock_key.size(), token.data(),
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
  absl::Status stored = absl::OkStatus();
  if (state.has_value()) stored = Write(handle, *state, /*only_new=*/false);
  const std::string lock_key = LockKey(handle);
  absl::StatusOr<Reply> unlocked = Command("EVAL %s 1 %b %b", kUnlockScript, lock_key.data(),
                                           lock_key.size(), hold.token.data(), hold.token.size());
  if (!stored.ok()) return stored;
  return unlocked.status();
}

absl::StatusOr<engine::RequestState> RedisSessionStore::Peek(absl::string_view handle,
                                                             absl::Time /*now*/) {
  return Read(handle);
}

absl::Status RedisSessionStore::Remove(absl::string_view handle, absl::Time /*now*/) {
  const std::string lock_key = LockKey(handle);
  SLOTSERVE_ASSIGN_OR_RETURN(Reply held, Command("EXISTS %b", lock_key.data(), lock_key.size()));
  if (held.integer() != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("session \"", handle, "\" is in use by a request"));
  }
  const std::string key = SessionKey(handle);
  SLOTSERVE_ASSIGN_OR_RETURN(Reply removed, Command("DEL %b", key.data(), key.size()));
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
