// A thread of its own for the gRPC writes that the engine's events start.
//
// A GenerationSink runs on the engine thread, and the whole batch waits for it. Starting a
// gRPC write there is not free: gRPC serialises the message and often sends it inline, a
// sendmsg system call per stream and step. At 32 streams a profile of the server (abc, 1
// thread) put ~5% of the engine thread in libgrpc and the kernel's TCP path. A GenerateCall
// therefore only queues its tokens on the engine thread and posts itself here; this thread
// starts the write. The engine thread pays a mutex and a vector push per stream and step.
#pragma once

#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace slotserve::server {

class WriteDispatcher {
 public:
  WriteDispatcher();
  // Runs every task posted before it, then stops the thread.
  ~WriteDispatcher();
  WriteDispatcher(const WriteDispatcher&) = delete;
  WriteDispatcher& operator=(const WriteDispatcher&) = delete;

  // Runs `task` on the dispatcher's thread, after the tasks posted before it. Never blocks on
  // the tasks themselves.
  void Post(absl::AnyInvocable<void() &&> task);

 private:
  void Loop();
  bool HasWorkLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::vector<absl::AnyInvocable<void() &&>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace slotserve::server
