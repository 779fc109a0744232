// WorkerPool: every part of every job runs exactly once before Run returns; workers that went to
// sleep between jobs wake for the next; resizing keeps it right.
#include "base/worker_pool.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace slotserve::base {
namespace {

// Runs `jobs` jobs; each part adds (job + 1) * (part + 1) to a per-part sum.
std::vector<int64_t> RunJobs(WorkerPool& pool, int jobs, bool pause_between) {
  std::vector<int64_t> sums(pool.threads(), 0);
  for (int job = 0; job < jobs; ++job) {
    pool.Run([&](int part, int parts) {
      ASSERT_EQ(parts, pool.threads());
      sums[part] += static_cast<int64_t>(job + 1) * (part + 1);
    });
    if (pause_between) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return sums;
}

TEST(WorkerPoolTest, EveryPartOfEveryJobRunsOnceBeforeRunReturns) {
  for (int threads : {1, 2, 4}) {
    WorkerPool pool;
    pool.Resize(threads);
    ASSERT_EQ(pool.threads(), threads);
    constexpr int kJobs = 5000;
    const std::vector<int64_t> sums = RunJobs(pool, kJobs, /*pause_between=*/false);
    for (int part = 0; part < threads; ++part) {
      EXPECT_EQ(sums[part], int64_t{kJobs} * (kJobs + 1) / 2 * (part + 1)) << threads << part;
    }
  }
}

TEST(WorkerPoolTest, SleepingWorkersWakeForTheNextJob) {
  WorkerPool pool;
  pool.Resize(3);
  // 2 ms between jobs is longer than a worker spins, so each job finds them asleep.
  const std::vector<int64_t> sums = RunJobs(pool, 20, /*pause_between=*/true);
  for (int part = 0; part < 3; ++part) EXPECT_EQ(sums[part], 210 * (part + 1)) << part;
}

// Parts are claimed by whichever thread comes first (the caller included, so a worker the OS
// has not scheduled yet costs no waiting): each index still runs once, on some pool thread.
TEST(WorkerPoolTest, EachPartIndexRunsOnceOnAPoolThread) {
  WorkerPool pool;
  pool.Resize(3);
  for (int job = 0; job < 200; ++job) {
    std::mutex mutex;
    std::multiset<int> indexes;
    std::set<std::thread::id> ids;
    pool.Run([&](int part, int) {
      std::lock_guard lock(mutex);
      indexes.insert(part);
      ids.insert(std::this_thread::get_id());
    });
    EXPECT_EQ(indexes, (std::multiset<int>{0, 1, 2})) << job;
    EXPECT_LE(ids.size(), 3u);
  }
}

TEST(WorkerPoolTest, ResizingBetweenJobsKeepsEveryJobWhole) {
  WorkerPool pool;
  for (int threads : {2, 1, 3, 2}) {
    pool.Resize(threads);
    const std::vector<int64_t> sums = RunJobs(pool, 100, /*pause_between=*/false);
    for (int part = 0; part < threads; ++part) EXPECT_EQ(sums[part], 5050 * (part + 1));
  }
}

}  // namespace
}  // namespace slotserve::base
