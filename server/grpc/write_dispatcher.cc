#include "server/grpc/write_dispatcher.h"

#include <utility>

namespace slotserve::server {

WriteDispatcher::WriteDispatcher() : thread_([this] { Loop(); }) {}

WriteDispatcher::~WriteDispatcher() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void WriteDispatcher::Post(absl::AnyInvocable<void() &&> task) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(task));
}

bool WriteDispatcher::HasWorkLocked() const { return stopping_ || !queue_.empty(); }

void WriteDispatcher::Loop() {
  std::vector<absl::AnyInvocable<void() &&>> batch;
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &WriteDispatcher::HasWorkLocked));
      if (queue_.empty()) return;  // stopping, and nothing left to run
      batch.swap(queue_);
    }
    // One step's events for every stream arrive together: run them as one batch, outside the
    // lock, so the engine thread's next posts never wait for a write.
    for (absl::AnyInvocable<void() &&>& task : batch) std::move(task)();
    batch.clear();
  }
}

}  // namespace slotserve::server
