// The session side of requests' ends, off the engine thread: a session store may be a network
// away (server/redis_session_store.h), and a store that hangs must not stall the step loop
// and with it every stream. The engine thread copies a request's final state out of its slot,
// frees the slot at once and posts the write here; one worker thread hands each write to the
// store, in order, and then calls the write's `done` (the scheduler's end of the request: its
// books and its sink), so a request's end reaches its client only after its session was
// stored, and a continuation sent at once finds it.
//
// Bounds: at most `max_pending_states` final states wait (their memory is the server's); a
// write beyond them keeps no state and fails UNAVAILABLE at once, naming the queue. A write
// that waited longer than `wait_limit` for the worker keeps no state either (UNAVAILABLE, saying
// it timed out). In both cases the request's hold on a continued session is still released,
// so the session keeps the state it had. Each store operation is bounded by the store itself
// (Redis: its I/O timeout).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/generation_request.h"
#include "engine/session_store.h"
#include "engine/state_blob.h"

namespace slotserve::engine {

class SessionWriter {
 public:
  struct Write {
    SessionOptions session;             // the request's handle and keep, as it asked
    std::optional<RequestState> state;  // the final state to keep; nullopt: none (release only)
    // Called once on the worker (or on the posting thread when the queue is full): the handle
    // the answer carries ("" for none) or why the state was not kept.
    std::function<void(absl::StatusOr<std::string>)> done;
  };

  SessionWriter(SessionStore& store, int max_pending_states, absl::Duration wait_limit);
  ~SessionWriter();  // Close()
  SessionWriter(const SessionWriter&) = delete;
  SessionWriter& operator=(const SessionWriter&) = delete;

  // Queues `write` (any thread). After Close, runs it on the calling thread.
  void Post(Write write);
  // Runs every write queued, then stops the worker. Idempotent; any thread but the worker.
  void Close();

 private:
  struct Queued {
    Write write;
    absl::Time posted;
  };
  void Run();
  void Execute(Queued queued);

  SessionStore& store_;
  const int max_pending_states_;
  const absl::Duration wait_limit_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::deque<Queued> queue_;
  int pending_states_ = 0;  // writes in queue_ that carry a state
  bool closed_ = false;
  std::thread worker_;
};

}  // namespace slotserve::engine
