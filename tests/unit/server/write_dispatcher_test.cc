// WriteDispatcher (server/grpc/write_dispatcher.h): posted tasks run on a thread other than the
// poster's, in the order they were posted, and none is lost when the dispatcher is destroyed
// with tasks still queued.
#include "server/grpc/write_dispatcher.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace slotserve::server {
namespace {

TEST(WriteDispatcherTest, RunsTasksOnItsOwnThreadInPostingOrder) {
  WriteDispatcher dispatcher;
  absl::Mutex mu;
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  absl::Notification done;
  constexpr int kTasks = 1000;
  for (int i = 0; i < kTasks; ++i) {
    dispatcher.Post([&, i] {
      absl::MutexLock lock(&mu);
      order.push_back(i);
      threads.push_back(std::this_thread::get_id());
      if (i == kTasks - 1) done.Notify();
    });
  }
  done.WaitForNotification();
  absl::MutexLock lock(&mu);
  ASSERT_EQ(order.size(), kTasks);
  for (int i = 0; i < kTasks; ++i) EXPECT_EQ(order[i], i);
  for (std::thread::id id : threads) {
    EXPECT_NE(id, std::this_thread::get_id());
    EXPECT_EQ(id, threads.front());
  }
}

TEST(WriteDispatcherTest, DestructionRunsEveryQueuedTask) {
  std::atomic<int> ran{0};
  absl::Notification started, release;
  {
    WriteDispatcher dispatcher;
    // The first task holds the thread, so the rest are still queued at destruction.
    dispatcher.Post([&] {
      started.Notify();
      release.WaitForNotification();
    });
    started.WaitForNotification();
    for (int i = 0; i < 100; ++i) dispatcher.Post([&] { ran.fetch_add(1); });
    // Released only after the destructor has begun (it then waits for the thread).
    std::thread releaser([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      release.Notify();
    });
    releaser.detach();
  }
  EXPECT_EQ(ran.load(), 100);
}

TEST(WriteDispatcherTest, TasksMayOwnWhatTheyUse) {
  auto shared = std::make_shared<int>(0);
  std::weak_ptr<int> watch = shared;
  absl::Notification done;
  {
    WriteDispatcher dispatcher;
    dispatcher.Post([owned = std::move(shared), &done] {
      ++*owned;
      done.Notify();
    });
    done.WaitForNotification();
  }
  // The task and what it captured are gone with the dispatcher's batch.
  EXPECT_TRUE(watch.expired());
}

}  // namespace
}  // namespace slotserve::server
