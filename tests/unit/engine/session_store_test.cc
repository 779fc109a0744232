// Sessions (docs/ARCHITECTURE.md "Request state"): unguessable handles, one request at a time,
// NOT_FOUND for unknown and expired handles, a failed request leaves the session as it was, the
// byte bound evicts the least recently used idle session and never one in use.
#include "engine/in_memory_session_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace slotserve::engine {
namespace {

RequestState State(int64_t tokens, size_t bytes = 1000) {
  RequestState state;
  state.token_count = tokens;
  state.payload.assign(bytes, static_cast<uint8_t>(tokens));
  return state;
}

const absl::Time kStart = absl::FromUnixSeconds(1'000'000);

TEST(SessionStoreTest, HandlesAreUnguessableAndDistinct) {
  InMemorySessionStore store({});
  std::set<std::string> handles;
  for (int i = 0; i < 200; ++i) {
    absl::StatusOr<std::string> handle = store.Create(State(i, 10), kStart);
    ASSERT_TRUE(handle.ok()) << handle.status();
    ASSERT_EQ(handle->size(), 3u + 32u) << *handle;
    EXPECT_EQ(handle->substr(0, 3), "ss-");
    handles.insert(*handle);
  }
  EXPECT_EQ(handles.size(), 200u);
}

TEST(SessionStoreTest, OneRequestAtATimeAndTheSessionMovesOn) {
  InMemorySessionStore store({});
  const std::string handle = *store.Create(State(5), kStart);
  absl::StatusOr<RequestState> held = store.Acquire(handle, kStart);
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(held->token_count, 5);
  EXPECT_EQ(store.Acquire(handle, kStart).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store.Remove(handle, kStart).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(store.Release(handle, State(9), kStart).ok());
  EXPECT_EQ(store.Acquire(handle, kStart)->token_count, 9);
  // A failed request: the state stays.
  EXPECT_TRUE(store.Release(handle, std::nullopt, kStart).ok());
  EXPECT_EQ(store.Peek(handle, kStart)->token_count, 9);
  EXPECT_TRUE(store.Remove(handle, kStart).ok());
  EXPECT_EQ(store.Acquire(handle, kStart).status().code(), absl::StatusCode::kNotFound);
}

TEST(SessionStoreTest, UnknownAndExpiredHandlesAreNotFound) {
  InMemorySessionStore store({.ttl = absl::Minutes(1), .max_bytes = 1 << 20});
  EXPECT_EQ(store.Acquire("ss-00000000000000000000000000000000", kStart).status().code(),
            absl::StatusCode::kNotFound);
  const std::string handle = *store.Create(State(1), kStart);
  EXPECT_TRUE(store.Peek(handle, kStart + absl::Seconds(59)).ok());
  const absl::Status expired = store.Acquire(handle, kStart + absl::Seconds(200)).status();
  EXPECT_EQ(expired.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(expired.message().find("expired"), std::string::npos);
  EXPECT_EQ(store.stats().expirations, 1);
  EXPECT_EQ(store.stats().sessions, 0);
}

TEST(SessionStoreTest, TheByteBoundEvictsIdleSessionsLeastRecentlyUsedFirst) {
  InMemorySessionStore store({.ttl = absl::Hours(1), .max_bytes = 2 * (1000 + 64)});
  const std::string a = *store.Create(State(1), kStart);
  const std::string b = *store.Create(State(2), kStart);
  ASSERT_TRUE(store.Acquire(a, kStart).ok());  // a is in use and most recent
  const std::string c = *store.Create(State(3), kStart);
  EXPECT_TRUE(store.Peek(a, kStart).ok());
  EXPECT_EQ(store.Peek(b, kStart).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store.Peek(c, kStart).ok());
  EXPECT_EQ(store.stats().evictions, 1);
  EXPECT_EQ(store.stats().bytes, 2 * (1000 + 64));
  InMemorySessionStore tiny({.ttl = absl::Hours(1), .max_bytes = 100});
  EXPECT_EQ(tiny.Create(State(1), kStart).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(SessionStoreTest, RacingRequestsForOneSessionGetItOneAtATime) {
  // Run under ThreadSanitizer by scripts/test.sh: gRPC threads acquire while the engine
  // thread releases.
  InMemorySessionStore store({});
  const std::string handle = *store.Create(State(1, 100), kStart);
  std::atomic<int> holders{0}, max_holders{0}, acquired{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        absl::StatusOr<RequestState> held = store.Acquire(handle, kStart);
        if (!held.ok()) {
          EXPECT_EQ(held.status().code(), absl::StatusCode::kFailedPrecondition);
          continue;
        }
        const int now = ++holders;
        int seen = max_holders.load();
        while (now > seen && !max_holders.compare_exchange_weak(seen, now)) {
        }
        ++acquired;
        --holders;
        EXPECT_TRUE(store.Release(handle, State(held->token_count + 1, 100), kStart).ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(max_holders.load(), 1);
  EXPECT_EQ(store.Peek(handle, kStart)->token_count, 1 + acquired.load());
}

}  // namespace
}  // namespace slotserve::engine
