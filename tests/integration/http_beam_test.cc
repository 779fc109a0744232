// Beam search over the OpenAI-compatible HTTP API (vLLM's use_beam_search, best_of = the
// width, n = hypotheses returned): the n-best come back as choices 0..n-1, best first, equal
// to gRPC's hypotheses, whole or streamed; refusals name the OpenAI parameter (chat with a
// template that stops at text is one).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "tests/integration/http_client.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

using nlohmann::json;

class HttpBeamTest : public ServerTest {
 protected:
  void SetUp() override { StartServer({"--max-slots=6", "--http-listen=127.0.0.1:0"}); }
  int port() const { return server_->http_port(); }

  // The same search over gRPC: its hypotheses.
  std::vector<v1::Hypothesis> GrpcHypotheses(const std::string& prompt, uint32_t width,
                                             uint32_t n_best, uint32_t max_new_tokens) {
    v1::GenerateRequest request;
    request.set_text(prompt);
    request.mutable_stopping()->set_max_new_tokens(max_new_tokens);
    request.mutable_stopping()->set_ignore_eos(true);
    request.mutable_beam()->set_width(width);
    request.mutable_beam()->set_n_best(n_best);
    const StreamResult result = Generate(*stub_, request);
    EXPECT_TRUE(result.status.ok()) << result.status.error_message();
    if (!result.finished) return {};
    return {result.finished->hypotheses().begin(), result.finished->hypotheses().end()};
  }
};

std::vector<int32_t> Ids(const v1::Hypothesis& hypothesis) {
  return {hypothesis.ids().begin(), hypothesis.ids().end()};
}

TEST_F(HttpBeamTest, TheNBestAreTheChoicesWholeOrStreamed) {
  const std::vector<v1::Hypothesis> expected = GrpcHypotheses("In the beginning", 4, 3, 8);
  ASSERT_EQ(expected.size(), 3u);
  const json request = {{"prompt", "In the beginning"}, {"max_tokens", 8}, {"ignore_eos", true},
                        {"use_beam_search", true},      {"best_of", 4},    {"n", 3},
                        {"return_token_ids", true}};
  const HttpResult whole = PostJson(port(), "/v1/completions", request);
  ASSERT_EQ(whole.status, 200) << whole.body;
  ASSERT_EQ(whole.json["choices"].size(), 3u) << whole.body;
  for (int i = 0; i < 3; ++i) {
    const json& choice = whole.json["choices"][i];
    EXPECT_EQ(choice["index"], i);
    EXPECT_EQ(choice["text"], expected[i].text());
    EXPECT_EQ(choice["token_ids"].get<std::vector<int32_t>>(), Ids(expected[i]));
    EXPECT_EQ(choice["finish_reason"], "length");
  }
  EXPECT_EQ(whole.json["usage"]["completion_tokens"], 24);  // every returned hypothesis

  json streamed = request;
  streamed["stream"] = true;
  const SseResult stream = PostStream(port(), "/v1/completions", streamed);
  ASSERT_EQ(stream.status, 200) << stream.raw;
  ASSERT_TRUE(stream.done && stream.well_formed) << stream.raw;
  const StreamedChoices choices = SplitChoices(stream, 3);
  EXPECT_TRUE(choices.indexes_in_range) << stream.raw;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(choices.texts[i], expected[i].text()) << "choice " << i;
  EXPECT_EQ(choices.finishes, std::vector<int>({1, 1, 1}));

  // Chat: the default template ends a turn at a text stop sequence, which beam search cannot
  // take; the refusal names the parameter and says why.
  const HttpResult chat =
      PostJson(port(), "/v1/chat/completions",
               {{"messages", {{{"role", "user"}, {"content", "Who made the light?"}}}},
                {"max_tokens", 6},
                {"use_beam_search", true},
                {"best_of", 3},
                {"n", 2}});
  EXPECT_EQ(chat.status, 400) << chat.body;
  EXPECT_EQ(chat.json["error"]["param"], "use_beam_search") << chat.body;
  EXPECT_TRUE(
      absl::StrContains(chat.json["error"]["message"].get<std::string>(), "use /v1/completions"))
      << chat.body;
  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(10)));
}

TEST_F(HttpBeamTest, RefusalsNameTheOpenAiParameter) {
  struct Case {
    json body;
    std::string param;
    std::string message_part;
  };
  const json base = {{"prompt", "x"}, {"use_beam_search", true}, {"best_of", 3}};
  std::vector<Case> cases;
  cases.push_back({json{{"prompt", "x"}, {"use_beam_search", true}}, "best_of",
                   "best_of (the beam width) must be > 1"});
  cases.push_back({base, "temperature", "temperature must be 0 or unset with best_of = 3"});
  cases.back().body["temperature"] = 0.8;
  cases.push_back({base, "n", "n must be in [1, best_of = 3], got 4"});
  cases.back().body["n"] = 4;
  cases.push_back({base, "best_of", "best_of must be in [1, 6]"});
  cases.back().body["best_of"] = 7;
  cases.push_back({base, "seed", "seed must be unset with best_of = 3"});
  cases.back().body["seed"] = 5;
  cases.push_back({json{{"prompt", "x"}, {"length_penalty", 1}}, "length_penalty",
                   "length_penalty needs \"use_beam_search\": true"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body.dump());
    const HttpResult result = PostJson(port(), "/v1/completions", c.body);
    EXPECT_EQ(result.status, 400) << result.body;
    ASSERT_TRUE(result.json.contains("error")) << result.body;
    EXPECT_EQ(result.json["error"]["param"], c.param);
    EXPECT_TRUE(
        absl::StrContains(result.json["error"]["message"].get<std::string>(), c.message_part))
        << result.body;
  }
}

}  // namespace
}  // namespace slotserve::testing
