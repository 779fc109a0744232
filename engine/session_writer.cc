#include "engine/session_writer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/session_end.h"

namespace slotserve::engine {

SessionWriter::SessionWriter(SessionStore& store, int max_pending_states, absl::Duration wait_limit)
    : store_(store),
      max_pending_states_(max_pending_states),
      wait_limit_(wait_limit),
      worker_([this] { Run(); }) {}

SessionWriter::~SessionWriter() { Close(); }

void SessionWriter::Post(Write write) {
  std::unique_lock lock(mu_);
  if (closed_) {
    lock.unlock();
    Execute({std::move(write), absl::Now()});
    return;
  }
  absl::Status refused;
  if (write.state.has_value() && pending_states_ >= max_pending_states_) {
    // The state is dropped; the hold of a continued session still goes back, in order.
    write.state.reset();
    refused = absl::UnavailableError(absl::StrCat(
        "session store: ", max_pending_states_,
        " final states already wait for the store to take them; this one was not kept"));
  }
  if (!refused.ok() && write.session.handle.empty()) {
    lock.unlock();
    write.done(refused);  // nothing to release: no store call needed
    return;
  }
  if (!refused.ok()) {
    // The release queues; the answer is the refusal, not what the release says.
    auto done = std::move(write.done);
    write.done = [done = std::move(done), refused](const absl::StatusOr<std::string>&) {
      done(refused);
    };
  }
  if (write.state.has_value()) ++pending_states_;
  queue_.push_back({std::move(write), absl::Now()});
  work_cv_.notify_one();
}

void SessionWriter::Close() {
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
    work_cv_.notify_one();
  }
  if (worker_.joinable()) worker_.join();
}

void SessionWriter::Run() {
  for (;;) {
    Queued next;
    {
      std::unique_lock lock(mu_);
      work_cv_.wait(lock, [&] { return closed_ || !queue_.empty(); });
      if (queue_.empty()) return;  // closed and drained
      next = std::move(queue_.front());
      queue_.pop_front();
      if (next.write.state.has_value()) --pending_states_;
    }
    Execute(std::move(next));
  }
}

void SessionWriter::Execute(Queued queued) {
  Write& write = queued.write;
  const absl::Time now = absl::Now();
  const absl::Duration waited = now - queued.posted;
  if (write.state.has_value() && waited > wait_limit_) {
    write.state.reset();
    const absl::Status timed_out = absl::UnavailableError(
        absl::StrCat("session store: timed out: the final state waited ",
                     absl::FormatDuration(waited), " (limit ", absl::FormatDuration(wait_limit_),
                     ") behind slower store operations and was not kept"));
    if (!write.session.handle.empty()) {
      store_.Release(write.session.handle, std::nullopt, now).IgnoreError();
    }
    write.done(timed_out);
    return;
  }
  write.done(StoreSessionEnd(write.session, std::move(write.state), store_, now));
}

}  // namespace slotserve::engine
