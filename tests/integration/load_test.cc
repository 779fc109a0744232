// Many streams at once, overload, cancellation and disconnects: every request ends cleanly and
// the state-slot pool is full again after every kind of ending.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <thread>

#include <gtest/gtest.h>
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

class LoadTest : public ServerTest {};

TEST_F(LoadTest, TwoHundredFiftySixConcurrentStreamsCompleteAndThePoolRefills) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--max-slots=64", "--max-queued=256"}));
  constexpr int kStreams = 256;
  const char* prompts[] = {"In the beginning", "And God said", "Let there be light",
                           "And the earth was without form", "x"};
  std::vector<StreamResult> results(kStreams);
  std::vector<uint32_t> wanted(kStreams);
  std::vector<std::thread> clients;
  // Several channels (connections), as separate clients would use.
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < 4; ++i) channels.push_back(server_->ConnectedChannel());
  for (int i = 0; i < kStreams; ++i) {
    wanted[i] = 8 + i % 9;
    clients.emplace_back([&, i] {
      auto stub = v1::SlotServe::NewStub(channels[i % channels.size()]);
      results[i] = Generate(*stub, GreedyTextRequest(prompts[i % 5], wanted[i]));
    });
  }
  for (std::thread& client : clients) client.join();

  double streamed_tokens = 0, prompt_tokens = 0;
  for (int i = 0; i < kStreams; ++i) {
    ASSERT_TRUE(results[i].status.ok())
        << "stream " << i << ": " << results[i].status.error_message();
    ASSERT_TRUE(results[i].finished.has_value());
    EXPECT_EQ(results[i].ids.size(), wanted[i]) << "stream " << i;
    EXPECT_EQ(results[i].finished->generated_tokens(), wanted[i]);
    streamed_tokens += results[i].ids.size();
    prompt_tokens += results[i].finished->prompt_tokens();
  }
  // Greedy and batch-independent: streams with the same prompt agree on their common prefix.
  for (int i = 5; i < kStreams; ++i) {
    const size_t common = std::min(results[i].ids.size(), results[i % 5].ids.size());
    EXPECT_TRUE(std::equal(results[i].ids.begin(), results[i].ids.begin() + common,
                           results[i % 5].ids.begin()))
        << "stream " << i << " differs from stream " << i % 5;
  }

  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(5)));
  const v1::ModelInfo info = GetModelInfo(*stub_);
  EXPECT_EQ(info.slots_free(), info.slots_total());
  EXPECT_EQ(info.slots_total(), 64);

  // The metrics count what was actually streamed.
  const std::string scrape = Scrape();
  EXPECT_EQ(MetricValue(scrape, "slotserve_generated_tokens_total"), streamed_tokens);
  EXPECT_EQ(MetricValue(scrape, "slotserve_prompt_tokens_total"), prompt_tokens);
  EXPECT_EQ(MetricValue(scrape, "slotserve_requests_total{outcome=\"length\"}"), kStreams);
  EXPECT_EQ(MetricValue(scrape, "slotserve_state_slots_used"), 0.0);
  EXPECT_EQ(MetricValue(scrape, "slotserve_time_to_first_token_seconds_count"), kStreams);
  EXPECT_EQ(MetricValue(scrape, "slotserve_request_duration_seconds_count"), kStreams);
  EXPECT_GT(MetricValue(scrape, "slotserve_batch_size_count").value_or(0), 0);
}

TEST_F(LoadTest, CancellingMidStreamFreesTheSlotWithinAStep) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--max-slots=4"}));
  const uint32_t tokens = TokensLasting(*stub_, absl::Seconds(10));
  BackgroundStream stream(channel_, GreedyTextRequest("In the beginning", tokens));
  ASSERT_TRUE(WaitFor([&] { return stream.messages_received() >= 2; }, absl::Seconds(30)));
  EXPECT_EQ(GetModelInfo(*stub_).slots_free(), 3);

  const absl::Time cancelled_at = absl::Now();
  stream.Cancel();
  ASSERT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(5)));
  // A decode step on this model takes well under a millisecond; allow scheduling noise.
  EXPECT_LT(absl::Now() - cancelled_at, absl::Seconds(1));
  const StreamResult result = stream.Wait();
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_LT(result.ids.size(), tokens);
  EXPECT_TRUE(WaitFor(
      [&] {
        return MetricValue(Scrape(), "slotserve_requests_total{outcome=\"cancelled\"}") == 1.0;
      },
      absl::Seconds(5)));
}

TEST_F(LoadTest, ADisconnectedClientFreesItsSlot) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--max-slots=2"}));
  const uint32_t tokens = TokensLasting(*stub_, absl::Seconds(20));
  // A real client process, killed mid-stream: the server sees the connection drop.
  std::vector<std::string> args = {CliBinary(),
                                   "--server=" + server_->address(),
                                   "--quiet",
                                   "generate",
                                   "--temperature=0",
                                   "--ignore-eos",
                                   absl::StrCat("--max-new-tokens=", tokens),
                                   "In the beginning"};
  const pid_t pid = SpawnWithStdoutDiscarded(args);
  ASSERT_GT(pid, 0) << "cannot start " << args[0];
  ASSERT_TRUE(WaitFor([&] { return GetModelInfo(*stub_).slots_free() == 1; }, absl::Seconds(30)));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(5)));
}

TEST_F(LoadTest, APassedDeadlineEndsTheRequestAndFreesItsSlot) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--max-slots=2"}));
  const uint32_t tokens = TokensLasting(*stub_, absl::Seconds(20));
  const StreamResult result =
      Generate(*stub_, GreedyTextRequest("In the beginning", tokens), absl::Milliseconds(300));
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << result.status.error_message();
  EXPECT_LT(result.ids.size(), tokens);
  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(5)));
}

TEST_F(LoadTest, OverloadGetsResourceExhaustedAtOnce) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--max-slots=1", "--max-queued=1"}));
  const uint32_t tokens = TokensLasting(*stub_, absl::Seconds(20));
  BackgroundStream running(channel_, GreedyTextRequest("In the beginning", tokens));
  ASSERT_TRUE(WaitFor([&] { return running.messages_received() > 0; }, absl::Seconds(30)));
  BackgroundStream queued(channel_, GreedyTextRequest("And God said", 8));
  ASSERT_TRUE(
      WaitFor([&] { return GetModelInfo(*stub_).requests_queued() == 1; }, absl::Seconds(30)));

  const absl::Time asked = absl::Now();
  const StreamResult refused = Generate(*stub_, GreedyTextRequest("Let there be light", 8));
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << refused.status.error_message();
  EXPECT_LT(absl::Now() - asked, absl::Seconds(2)) << "the refusal must not wait for a slot";
  grpc::ClientContext context;
  v1::CompleteResponse response;
  EXPECT_EQ(stub_->Complete(&context, GreedyTextRequest("x", 8), &response).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);

  running.Cancel();
  const StreamResult waited = queued.Wait();  // admitted once the slot came back
  EXPECT_TRUE(waited.status.ok()) << waited.status.error_message();
  EXPECT_EQ(waited.ids.size(), 8u);
  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(5)));
  EXPECT_EQ(MetricValue(Scrape(), "slotserve_requests_total{outcome=\"resource_exhausted\"}"), 2.0);
}

}  // namespace
}  // namespace slotserve::testing
