// The HTTP API under the serving life cycle: a client that hangs up mid-stream frees its slot,
// a full queue answers 429, SIGTERM drains HTTP like gRPC (503 for new requests, running
// streams finish), and curl, the tool people reach for first, works as documented.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/integration/http_client.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

using nlohmann::json;

class HttpLifecycleTest : public ServerTest {
 protected:
  void StartHttp(std::vector<std::string> flags) {
    flags.push_back("--http-listen=127.0.0.1:0");
    ASSERT_NO_FATAL_FAILURE(StartServer(flags));
    ASSERT_GT(server_->http_port(), 0) << server_->log();
  }
  int port() const { return server_->http_port(); }

  json LongStream(uint32_t tokens) {
    return {{"prompt", "In the beginning"},
            {"max_tokens", tokens},
            {"temperature", 0},
            {"ignore_eos", true},
            {"stream", true}};
  }
};

TEST_F(HttpLifecycleTest, HangingUpMidStreamCancelsTheRequestAndFreesItsSlot) {
  ASSERT_NO_FATAL_FAILURE(StartHttp({"--max-slots=2"}));
  const uint32_t tokens = TokensLasting(*stub_, absl::Seconds(20));
  int seen = 0;
  const absl::Time start = absl::Now();
  const SseResult stream = PostStream(port(), "/v1/completions", LongStream(tokens),
                                      [&](const json&) { return ++seen < 5; });
  EXPECT_EQ(stream.status, 200);
  EXPECT_EQ(seen, 5);
  EXPECT_FALSE(stream.done);
  // The engine notices at its next write and frees the slot at the next step, long before
  // the 20 s the request would have run.
  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(10))) << server_->log();
  EXPECT_LT(absl::Now() - start, absl::Seconds(15));
  EXPECT_TRUE(WaitFor(
      [&] {
        return MetricValue(Scrape(), "slotserve_requests_total{outcome=\"cancelled\"}") == 1.0;
      },
      absl::Seconds(5)))
      << Scrape();
}

TEST_F(HttpLifecycleTest, AFullQueueAnswers429) {
  ASSERT_NO_FATAL_FAILURE(StartHttp({"--max-slots=1", "--max-queued=1"}));
  const uint32_t tokens = TokensLasting(*stub_, absl::Seconds(20));
  BackgroundStream running(channel_, GreedyTextRequest("In the beginning", tokens));
  ASSERT_TRUE(WaitFor([&] { return running.messages_received() > 0; }, absl::Seconds(20)));
  BackgroundStream queued(channel_, GreedyTextRequest("And God said", tokens));
  ASSERT_TRUE(
      WaitFor([&] { return GetModelInfo(*stub_).requests_queued() == 1; }, absl::Seconds(10)));
  const HttpResult refused = PostJson(port(), "/v1/completions", {{"prompt", "x"}});
  EXPECT_EQ(refused.status, 429) << refused.body;
  EXPECT_EQ(refused.json["error"]["type"], "rate_limit_error");
  // How long the SDKs' automatic retry waits (issue 57: there was no Retry-After).
  EXPECT_EQ(refused.Header("Retry-After"), "1");
  EXPECT_TRUE(absl::StrContains(refused.json["error"]["message"].get<std::string>(), "queue"))
      << refused.body;
  running.Cancel();
  queued.Cancel();
  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(10)));
}

TEST_F(HttpLifecycleTest, SigtermDrainsHttpStreamsAndRefusesNewRequestsWith503) {
  ASSERT_NO_FATAL_FAILURE(StartHttp({"--max-slots=2", "--drain-timeout=60s"}));
  const uint32_t tokens = TokensLasting(*stub_, absl::Seconds(3));
  std::atomic<bool> streaming{false};
  SseResult drained;
  std::thread client([&] {
    drained = PostStream(port(), "/v1/completions", LongStream(tokens), [&](const json&) {
      streaming = true;
      return true;
    });
  });
  ASSERT_TRUE(WaitFor([&] { return streaming.load(); }, absl::Seconds(20)));
  server_->Terminate();
  ASSERT_TRUE(
      WaitFor([&] { return HttpRequest(port(), "/health").status == 503; }, absl::Seconds(10)));
  const HttpResult refused = PostJson(port(), "/v1/completions", {{"prompt", "x"}});
  EXPECT_EQ(refused.status, 503) << refused.body;
  client.join();
  // The running stream finished normally.
  EXPECT_TRUE(drained.done) << drained.raw.substr(0, 500);
  ASSERT_GE(drained.events.size(), 1u);
  EXPECT_EQ(drained.events.back()["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(server_->WaitForExit(absl::Seconds(30)), 0) << server_->log();
}

TEST_F(HttpLifecycleTest, ABurstOfNewConnectionsIsServedWithoutDroppedConnects) {
  ASSERT_NO_FATAL_FAILURE(StartHttp({"--max-slots=64"}));
  // cpp-httplib's own listen backlog (5) made the kernel drop SYNs of a burst, which clients
  // resend only a second later; the listener raises it.
  if (access("/usr/bin/ss", X_OK) == 0) {
    const CommandResult ss =
        RunCommand({"/usr/bin/ss", "-Hltn", absl::StrCat("sport = :", port())});
    const std::vector<std::string> fields = absl::StrSplit(ss.out, ' ', absl::SkipEmpty());
    ASSERT_GE(fields.size(), 3u) << ss.out << ss.err;
    EXPECT_GE(std::stoi(fields[2]), 128) << "listen backlog: " << ss.out;
  }
  constexpr int kClients = 48;
  std::vector<int> statuses(kClients);
  std::vector<std::thread> clients;
  const absl::Time start = absl::Now();
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      statuses[i] =
          PostJson(port(), "/v1/completions", {{"prompt", "x"}, {"max_tokens", 1}}).status;
    });
  }
  for (std::thread& client : clients) client.join();
  for (int i = 0; i < kClients; ++i) EXPECT_EQ(statuses[i], 200) << "client " << i;
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST_F(HttpLifecycleTest, CurlGetsCompletionsAndAStream) {
  ASSERT_NO_FATAL_FAILURE(StartHttp({}));
  const std::string url = absl::StrCat("http://127.0.0.1:", port());
  const CommandResult whole =
      RunCommand({"/usr/bin/curl", "-sS", "--fail-with-body", url + "/v1/completions", "-H",
                  "Content-Type: application/json", "-d",
                  R"({"prompt": "In the beginning", "max_tokens": 8, "temperature": 0})"});
  ASSERT_EQ(whole.exit_status, 0) << whole.err << whole.out;
  const json answer = json::parse(whole.out);
  EXPECT_EQ(answer["object"], "text_completion");
  EXPECT_EQ(answer["usage"]["completion_tokens"].get<int>() <= 8, true);

  const CommandResult stream = RunCommand(
      {"/usr/bin/curl", "-sSN", "--fail-with-body", url + "/v1/chat/completions", "-d",
       R"({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 6, "stream": true})"});
  ASSERT_EQ(stream.exit_status, 0) << stream.err << stream.out;
  const std::vector<std::string> events =
      absl::StrSplit(stream.out, "\n\n", absl::SkipWhitespace());
  ASSERT_GE(events.size(), 3u) << stream.out;
  for (const std::string& event : events) EXPECT_TRUE(absl::StartsWith(event, "data: ")) << event;
  EXPECT_EQ(events.back(), "data: [DONE]");

  const CommandResult refused =
      RunCommand({"/usr/bin/curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                  url + "/v1/completions", "-d", R"({"prompt": "x", "top_k": -5})"});
  EXPECT_EQ(refused.out, "400");
}

}  // namespace
}  // namespace slotserve::testing
