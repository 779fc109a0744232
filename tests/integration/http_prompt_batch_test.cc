// A batch of prompts on /v1/completions (OpenAI's "prompt": [p0, p1, ...]) on a real server:
// one engine request per prompt, one answer. The independent check is each prompt sent alone:
// seeded sampling does not depend on what else runs, so prompt p's choice j in the batch
// (answered as choice p * n + j) must equal choice j of prompt p's own request, text, ids and
// logprobs alike, whole and streamed, with echo; usage adds the prompts up. A bad element is
// refused by its index, and a batch the queue cannot take is refused whole, leaving nothing
// running; a batch with a bad prompt is refused as bad (400), not as overload (429), even when
// the queue is full.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/integration/http_client.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

using nlohmann::json;

class HttpPromptBatchTest : public ServerTest {
 protected:
  void SetUp() override {
    StartServer({"--max-slots=4", "--max-queued=4", "--http-listen=127.0.0.1:0"});
  }
  int port() const { return server_->http_port(); }

  // The answer to `body` with `prompt` alone in it.
  json Alone(json body, const json& prompt) {
    body["prompt"] = prompt;
    const HttpResult alone = PostJson(port(), "/v1/completions", body);
    EXPECT_EQ(alone.status, 200) << alone.body;
    return alone.json;
  }
};

const json kPrompts = {"In the beginning God", "And the earth was without form",
                       json::array({1, 17, 42})};

TEST_F(HttpPromptBatchTest, EachPromptsChoicesEqualThatPromptSentAlone) {
  ASSERT_GT(port(), 0) << server_->log();
  const json body = {{"prompt", kPrompts}, {"n", 2},          {"seed", 7},
                     {"temperature", 1.0}, {"max_tokens", 6}, {"ignore_eos", true},
                     {"logprobs", 1},      {"echo", true},    {"return_token_ids", true}};
  const HttpResult batch = PostJson(port(), "/v1/completions", body);
  ASSERT_EQ(batch.status, 200) << batch.body;
  const json& choices = batch.json["choices"];
  ASSERT_EQ(choices.size(), 6u) << batch.body;
  int prompt_tokens = 0;
  int completion_tokens = 0;
  for (size_t p = 0; p < kPrompts.size(); ++p) {
    const json alone = Alone(body, kPrompts[p]);
    prompt_tokens += alone["usage"]["prompt_tokens"].get<int>();
    completion_tokens += alone["usage"]["completion_tokens"].get<int>();
    for (int j = 0; j < 2; ++j) {
      SCOPED_TRACE(::testing::Message() << "prompt " << p << ", choice " << j);
      const json& got = choices[p * 2 + j];
      const json& want = alone["choices"][j];
      EXPECT_EQ(got["index"], p * 2 + j);
      EXPECT_EQ(got["text"], want["text"]);
      EXPECT_EQ(got["token_ids"], want["token_ids"]);
      EXPECT_EQ(got["logprobs"]["tokens"], want["logprobs"]["tokens"]);
      EXPECT_EQ(got["logprobs"]["text_offset"], want["logprobs"]["text_offset"]);
      ASSERT_EQ(got["logprobs"]["token_logprobs"].size(),
                want["logprobs"]["token_logprobs"].size());
      for (size_t t = 1; t < want["logprobs"]["token_logprobs"].size(); ++t) {
        EXPECT_NEAR(got["logprobs"]["token_logprobs"][t].get<double>(),
                    want["logprobs"]["token_logprobs"][t].get<double>(), 1e-5)
            << "token " << t;
      }
    }
  }
  EXPECT_EQ(batch.json["usage"]["prompt_tokens"], prompt_tokens);
  EXPECT_EQ(batch.json["usage"]["completion_tokens"], completion_tokens);
  EXPECT_EQ(choices[4]["text"].get<std::string>().rfind(choices[4]["logprobs"]["tokens"][0], 0), 0u)
      << "a token-id prompt is echoed decoded";
}

TEST_F(HttpPromptBatchTest, StreamedEachChoiceIsItsWholeAnswerAndUsageComesLast) {
  ASSERT_GT(port(), 0) << server_->log();
  json body = {{"prompt", kPrompts}, {"n", 2},          {"seed", 3},
               {"temperature", 0.8}, {"max_tokens", 5}, {"ignore_eos", true},
               {"echo", true},       {"logprobs", 0}};
  const HttpResult whole = PostJson(port(), "/v1/completions", body);
  ASSERT_EQ(whole.status, 200) << whole.body;
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  const SseResult stream = PostStream(port(), "/v1/completions", body);
  ASSERT_EQ(stream.status, 200) << stream.raw;
  const StreamedChoices split = SplitChoices(stream, 6);
  EXPECT_TRUE(split.indexes_in_range);
  for (int index = 0; index < 6; ++index) {
    EXPECT_EQ(split.texts[index], whole.json["choices"][index]["text"]) << "choice " << index;
    EXPECT_EQ(split.finishes[index], 1) << "choice " << index;
  }
  // Each choice's first chunk is its own prompt's echo.
  std::vector<bool> seen(6, false);
  for (const json& event : stream.events) {
    if (!event.contains("choices") || event["choices"].empty()) continue;
    const int index = event["choices"][0]["index"];
    if (seen[index]) continue;
    seen[index] = true;
    const json& echoed = whole.json["choices"][index]["logprobs"]["tokens"];
    const size_t prompt_tokens = event["choices"][0]["logprobs"]["tokens"].size();
    EXPECT_EQ(echoed.size(), prompt_tokens + 5) << "choice " << index;
  }
  ASSERT_FALSE(stream.events.empty());
  const json& last = stream.events.back();
  EXPECT_TRUE(last["choices"].empty());
  EXPECT_EQ(last["usage"], whole.json["usage"]);
}

TEST_F(HttpPromptBatchTest, BadElementsAreNamedAndAnOversizedBatchLeavesNothingRunning) {
  ASSERT_GT(port(), 0) << server_->log();
  HttpResult refused =
      PostJson(port(), "/v1/completions", {{"prompt", {"And God said", ""}}, {"max_tokens", 2}});
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(refused.json["error"]["param"], "prompt[1]") << refused.body;
  // The engine's refusal of the third prompt's ids names it in the batch.
  refused = PostJson(port(), "/v1/completions",
                     {{"prompt", {"And God said", json::array({1, 2}), json::array({1, 99999})}},
                      {"max_tokens", 2}});
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(refused.json["error"]["param"], "prompt[2][1]") << refused.body;
  // 4 queue places cannot take 9 long prompts at once: 429, and the batch is refused whole, so
  // nothing of it ran, was counted or holds a place (before, the prompts queued ahead of the
  // refusal were cancelled at the next step).
  const std::optional<double> cancelled_before =
      MetricValue(Scrape(), "slotserve_requests_total{outcome=\"cancelled\"}");
  const std::optional<double> prompt_tokens_before =
      MetricValue(Scrape(), "slotserve_prompt_tokens_total");
  json many = json::array();
  for (int i = 0; i < 9; ++i) many.push_back(absl::StrCat("And God said ", i));
  refused = PostJson(port(), "/v1/completions",
                     {{"prompt", many}, {"max_tokens", 100000}, {"ignore_eos", true}});
  EXPECT_EQ(refused.status, 429) << refused.body;
  EXPECT_TRUE(PoolIsFull());
  const std::string after = Scrape();
  EXPECT_EQ(MetricValue(after, "slotserve_requests_total{outcome=\"cancelled\"}"),
            cancelled_before);
  EXPECT_EQ(MetricValue(after, "slotserve_prompt_tokens_total"), prompt_tokens_before);
  const HttpResult served =
      PostJson(port(), "/v1/completions", {{"prompt", {"And", "God"}}, {"max_tokens", 2}});
  EXPECT_EQ(served.status, 200) << served.body;
  EXPECT_EQ(served.json["choices"].size(), 2u);
}

// Long streams can hold every slot and queue place while a test looks at refusals.
class HttpFullServerBatchTest : public ServerTest {
 protected:
  void SetUp() override {
    StartServer({"--max-slots=2", "--max-queued=2", "--max-new-tokens-limit=1000000",
                 "--http-listen=127.0.0.1:0"});
  }
  int port() const { return server_->http_port(); }
};

TEST_F(HttpFullServerBatchTest, ABadPromptIsRefusedAsBadWhenTheQueueIsFull) {
  ASSERT_GT(port(), 0) << server_->log();
  // Endless streams: two run, then two wait (the queue holds submitted requests until the
  // engine admits them, so the four cannot arrive as one batch). The client hangs up at the end.
  std::atomic<bool> done{false};
  auto endless = [&](const json& prompts) {
    return std::thread([&, prompts] {
      PostStream(
          port(), "/v1/completions",
          {{"prompt", prompts}, {"max_tokens", 1000000}, {"ignore_eos", true}, {"stream", true}},
          [&](const json&) { return !done.load(); });
    });
  };
  auto wait_for = [&](const std::string& gauge) {
    for (int i = 0; i < 100; ++i) {
      if (MetricValue(Scrape(), gauge).value_or(0) == 2) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  };
  std::thread running = endless({"And God said", "Let there be"});
  EXPECT_TRUE(wait_for("slotserve_requests_running")) << Scrape();
  std::thread queued = endless({"In the", "And the"});
  EXPECT_TRUE(wait_for("slotserve_requests_queued")) << Scrape();
  const HttpResult overloaded =
      PostJson(port(), "/v1/completions", {{"prompt", "And"}, {"max_tokens", 2}});
  EXPECT_EQ(overloaded.status, 429) << overloaded.body;
  // The good first prompt would not fit either; the bad second one is what the client must fix.
  const HttpResult bad =
      PostJson(port(), "/v1/completions",
               {{"prompt", {"And God said", json::array({1, 99999})}}, {"max_tokens", 2}});
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(bad.json["error"]["param"], "prompt[1][1]") << bad.body;
  done = true;
  running.join();
  queued.join();
}

}  // namespace
}  // namespace slotserve::testing
