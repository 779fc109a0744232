// The session writer (session_writer.h) alone and inside the scheduler, over a session store
// whose writes block until the test opens a gate (a stand-in for a hung Redis): writes run in
// order off the posting thread, a full queue and a write that waited too long keep no state
// but still release the continued session, and a keep-session request whose store hangs
// neither stalls another running stream nor reaches its sink before the store answered.
#include <gtest/gtest.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "engine/in_memory_session_store.h"
#include "engine/scheduler.h"
#include "engine/session_writer.h"
#include "tests/unit/engine/fake_language_model.h"
#include "tests/unit/engine/greedy_request.h"
#include "tests/unit/engine/recording_sink.h"

namespace slotserve::engine {
namespace {

// An in-memory store whose Create and Release wait until Open() (Acquire, Peek do not).
class GatedSessionStore final : public SessionStore {
 public:
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  int writes_started() const {
    std::lock_guard lock(mu_);
    return writes_started_;
  }
  // Blocks until `n` writes reached the gate.
  bool WaitWritesStarted(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] { return writes_started_ >= n; });
  }

  absl::StatusOr<std::string> Create(RequestState state, absl::Time now) override {
    Gate();
    return inner_.Create(std::move(state), now);
  }
  absl::StatusOr<RequestState> Acquire(absl::string_view handle, absl::Time now) override {
    return inner_.Acquire(handle, now);
  }
  absl::Status Release(absl::string_view handle, std::optional<RequestState> state,
                       absl::Time now) override {
    Gate();
    return inner_.Release(handle, std::move(state), now);
  }
  absl::StatusOr<RequestState> Peek(absl::string_view handle, absl::Time now) override {
    return inner_.Peek(handle, now);
  }
  absl::Status Remove(absl::string_view handle, absl::Time now) override {
    return inner_.Remove(handle, now);
  }
  SessionStoreStats stats() const override { return inner_.stats(); }

 private:
  void Gate() {
    std::unique_lock lock(mu_);
    ++writes_started_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
  }
  InMemorySessionStore inner_{SessionStoreOptions{}};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int writes_started_ = 0;
};

RequestState State(int64_t tokens) {
  RequestState state;
  state.token_count = tokens;
  state.payload.assign(16, static_cast<uint8_t>(tokens));
  return state;
}

// Collects each write's answer, in the order they came.
struct Answers {
  std::function<void(absl::StatusOr<std::string>)> Record(int tag) {
    return [this, tag](absl::StatusOr<std::string> answer) {
      std::lock_guard lock(mu);
      order.push_back(tag);
      results.push_back(std::move(answer));
      cv.notify_all();
    };
  }
  size_t count() {
    std::lock_guard lock(mu);
    return results.size();
  }
  bool WaitFor(size_t n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(20), [&] { return results.size() >= n; });
  }
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int> order;
  std::vector<absl::StatusOr<std::string>> results;
};

SessionOptions Keep() {
  SessionOptions session;
  session.keep = true;
  return session;
}

TEST(SessionWriterTest, WritesRunInOrderOffThePostingThreadAndCloseRunsTheRest) {
  GatedSessionStore store;
  Answers answers;
  SessionWriter writer(store, /*max_pending_states=*/8, absl::Seconds(60));
  for (int i = 0; i < 3; ++i) writer.Post({Keep(), State(i + 1), answers.Record(i)});
  ASSERT_TRUE(store.WaitWritesStarted(1));
  EXPECT_EQ(answers.count(), 0u) << "Post returned while the store still hangs";
  store.Open();
  writer.Close();
  ASSERT_EQ(answers.results.size(), 3u);
  EXPECT_EQ(answers.order, (std::vector<int>{0, 1, 2}));
  for (const auto& handle : answers.results) {
    ASSERT_TRUE(handle.ok()) << handle.status();
    EXPECT_TRUE(absl::StartsWith(*handle, "ss-")) << *handle;
  }
}

TEST(SessionWriterTest, AFullQueueKeepsNoStateButStillReleasesTheContinuedSession) {
  GatedSessionStore store;
  Answers answers;
  SessionWriter writer(store, /*max_pending_states=*/1, absl::Seconds(60));
  writer.Post({Keep(), State(1), answers.Record(0)});  // taken by the worker, at the gate
  ASSERT_TRUE(store.WaitWritesStarted(1));
  writer.Post({Keep(), State(2), answers.Record(1)});  // waits: the one pending state
  writer.Post({Keep(), State(3), answers.Record(2)});  // beyond the bound, no hold to release
  ASSERT_TRUE(answers.WaitFor(1));
  EXPECT_EQ(answers.order.front(), 2) << "refused at once, before the hung store answered";
  EXPECT_EQ(answers.results.front().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(answers.results.front().status().message(), "was not kept"))
      << answers.results.front().status();
  store.Open();
  writer.Close();
  ASSERT_EQ(answers.results.size(), 3u);
  EXPECT_TRUE(answers.results[1].ok());
  EXPECT_TRUE(answers.results[2].ok());
}

TEST(SessionWriterTest, AStateThatWaitedPastTheLimitIsNotKeptAndItsSessionKeepsItsOldState) {
  GatedSessionStore store;
  store.Open();  // set up a session to continue
  absl::StatusOr<std::string> handle = store.Create(State(5), absl::Now());
  ASSERT_TRUE(handle.ok());
  ASSERT_TRUE(store.Acquire(*handle, absl::Now()).ok());

  Answers answers;
  {
    GatedSessionStore gated;
    SessionWriter writer(gated, /*max_pending_states=*/8, absl::Milliseconds(50));
    writer.Post({Keep(), State(1), answers.Record(0)});
    ASSERT_TRUE(gated.WaitWritesStarted(1));
    absl::SleepFor(absl::Milliseconds(200));  // the second write waits past the limit
    writer.Post({Keep(), State(2), answers.Record(1)});
    absl::SleepFor(absl::Milliseconds(100));
    gated.Open();
    writer.Close();
  }
  ASSERT_EQ(answers.results.size(), 2u);
  EXPECT_TRUE(answers.results[0].ok()) << answers.results[0].status();
  EXPECT_EQ(answers.results[1].status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(answers.results[1].status().message(), "timed out"))
      << answers.results[1].status();

  // A continued session's timed-out write gives the hold back with the old state.
  Answers continued;
  SessionWriter writer(store, /*max_pending_states=*/8, absl::ZeroDuration());
  SessionOptions session;
  session.keep = true;
  session.handle = *handle;
  writer.Post({session, State(9), continued.Record(0)});  // any wait is past a zero limit
  writer.Close();
  ASSERT_EQ(continued.results.size(), 1u);
  EXPECT_FALSE(continued.results[0].ok());
  absl::StatusOr<RequestState> after = store.Acquire(*handle, absl::Now());
  ASSERT_TRUE(after.ok()) << "the hold was released: " << after.status();
  EXPECT_EQ(after->token_count, 5);
}

TEST(SessionWriterTest, AHungStoreStallsNeitherTheStepLoopNorAnswersBeforeTheStateIsStored) {
  auto store = std::make_shared<GatedSessionStore>();
  SchedulerOptions options;
  options.session_store = store;
  options.max_new_tokens_limit = 100000;
  auto model = std::make_unique<testing::FakeLanguageModel>();
  model->set_call_delay(absl::Milliseconds(1));
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler =
      Scheduler::Create(std::move(model), nullptr, options);
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  (*scheduler)->Start();

  auto stream = std::make_shared<testing::RecordingSink>();
  ASSERT_TRUE((*scheduler)->Submit(testing::Greedy({5}, 100000), stream).ok());
  ASSERT_TRUE(stream->WaitTokens(5));
  GenerationRequest keep = testing::Greedy({7, 8}, 3);
  keep.session.keep = true;
  auto kept = std::make_shared<testing::RecordingSink>();
  absl::StatusOr<RequestId> keep_id = (*scheduler)->Submit(keep, kept);
  ASSERT_TRUE(keep_id.ok());
  ASSERT_TRUE(store->WaitWritesStarted(1));  // its end waits on the store now

  const size_t before = stream->ids().size();
  EXPECT_TRUE(stream->WaitTokens(before + 50, absl::Seconds(10)))
      << "the stream went on while the store hung";
  EXPECT_FALSE(kept->WaitFinished(absl::ZeroDuration()).has_value())
      << "the end waits for the store";
  EXPECT_EQ((*scheduler)->stats().slots_used, 1) << "the finished request's slot is free";

  store->Open();
  std::optional<Finished> finished = kept->WaitFinished();
  ASSERT_TRUE(finished.has_value());
  ASSERT_TRUE(finished->status.ok()) << finished->status;
  ASSERT_FALSE(finished->session_handle.empty());
  // A continuation sent at once finds the session.
  GenerationRequest next = testing::Greedy({9}, 2);
  next.session.handle = finished->session_handle;
  auto continued = std::make_shared<testing::RecordingSink>();
  ASSERT_TRUE((*scheduler)->Submit(next, continued).ok());
  std::optional<Finished> continued_end = continued->WaitFinished();
  ASSERT_TRUE(continued_end.has_value());
  EXPECT_TRUE(continued_end->status.ok()) << continued_end->status;
  (*scheduler)->Stop();
}

}  // namespace
}  // namespace slotserve::engine
