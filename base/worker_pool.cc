#include "base/worker_pool.h"

#include <immintrin.h>

namespace slotserve::base {

WorkerPool& WorkerPool::Instance() {
  static WorkerPool* pool = new WorkerPool();  // never destroyed: workers outlive statics
  return *pool;
}

WorkerPool::~WorkerPool() { Stop(); }

void WorkerPool::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_.store(true);
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
  stopping_.store(false);
}

void WorkerPool::Resize(int threads) {
  const int workers = threads > 1 ? threads - 1 : 0;
  if (workers == static_cast<int>(workers_.size())) return;
  Stop();
  const uint64_t seen = generation_.load();  // a new worker waits for the next job
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this, seen] { Work(seen); });
}

void WorkerPool::Run(absl::FunctionRef<void(int, int)> part) {
  const int parts = threads();
  if (parts == 1) {
    part(0, 1);
    return;
  }
  job_ = &part;
  job_parts_.store(parts, std::memory_order_relaxed);
  done_parts_.store(0, std::memory_order_relaxed);
  next_part_.store(0, std::memory_order_release);  // opens the job
  // Sequentially consistent with the sleepers' count (Work): either a worker about to sleep sees
  // the new generation in its wait predicate, or this sees it counted and goes through the mutex,
  // which orders the notification after that worker started waiting. While every worker spins,
  // a job costs no lock.
  generation_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard lock(mutex_); }
    wake_.notify_all();
  }
  ClaimParts();
  while (done_parts_.load(std::memory_order_acquire) != parts) _mm_pause();
  next_part_.store(kClosed, std::memory_order_relaxed);
}

void WorkerPool::ClaimParts() {
  for (;;) {
    const int index = next_part_.fetch_add(1, std::memory_order_acq_rel);
    const int parts = job_parts_.load(std::memory_order_acquire);
    if (index >= parts) return;
    (*job_)(index, parts);
    done_parts_.fetch_add(1, std::memory_order_acq_rel);
  }
}

void WorkerPool::Work(uint64_t seen) {
  for (;;) {
    uint64_t now = generation_.load(std::memory_order_acquire);
    for (int spin = 0; now == seen && spin < kSpinIterations; ++spin) {
      if (stopping_.load(std::memory_order_relaxed)) return;
      _mm_pause();
      now = generation_.load(std::memory_order_acquire);
    }
    if (now == seen) {
      std::unique_lock lock(mutex_);
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      wake_.wait(lock, [&] {
        return stopping_.load() || generation_.load(std::memory_order_seq_cst) != seen;
      });
      sleepers_.fetch_sub(1, std::memory_order_acq_rel);
      if (stopping_.load()) return;
      now = generation_.load(std::memory_order_acquire);
    }
    seen = now;
    ClaimParts();
  }
}

}  // namespace slotserve::base
