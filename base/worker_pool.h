// The engine's own compute threads (issue 16, "every op threaded"): a fixed set of workers that
// split one kernel's work with the calling thread. One pool per process, sized by
// SetComputeThreads, so `--threads N` means N threads for every op.
//
// A kernel call is short (tens of microseconds for a decode step's linear layer), so waking a
// sleeping thread per call would cost as much as the work: after a job a worker spins for a
// while (kSpinIterations pauses, ~0.12 ms on the development machine) for the next one, then
// sleeps on a condition variable; the next Run wakes it. Jobs never overlap: Run is called from
// one thread at a time (the engine thread) and returns when every part is done. The OpenBLAS
// calls inside a part run single-threaded (SetComputeThreads sets that).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"

namespace slotserve::base {

class WorkerPool {
 public:
  // The process's pool (no workers until Resize).
  static WorkerPool& Instance();

  WorkerPool() = default;
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // `threads` in total, the caller's included (threads - 1 workers); <= 1: no workers.
  void Resize(int threads);
  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs part(p, parts) for p in [0, parts), parts = threads(), each exactly once, all returning
  // before Run does. Parts are claimed, not assigned: the caller takes them too, so a worker the
  // OS has not scheduled yet (a busy machine) costs nothing but its share of the speed-up.
  // `part` must not call Run.
  // A FunctionRef, not a std::function: a kernel's lambda is never copied to the heap.
  void Run(absl::FunctionRef<void(int part, int parts)> part);

 private:
  static constexpr int kSpinIterations = 5000;
  static constexpr int kClosed = 1 << 30;  // next_part_ between jobs: nothing left to claim

  void Work(uint64_t seen);
  // Claims and runs parts of the open job until none is left.
  void ClaimParts();
  void Stop();

  std::vector<std::thread> workers_;
  // The current job, published by next_part_'s release store (and read after a claim).
  const absl::FunctionRef<void(int, int)>* job_ = nullptr;
  std::atomic<int> job_parts_{1};
  std::atomic<int> next_part_{kClosed};
  std::atomic<int> done_parts_{0};
  std::atomic<uint64_t> generation_{0};  // wakes workers for a new job
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<int> sleepers_{0};
};

}  // namespace slotserve::base
