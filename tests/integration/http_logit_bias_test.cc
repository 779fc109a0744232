// OpenAI's logit_bias on a real server, over HTTP: a bias of -100 on the greedy token gives the
// runner-up that an unbiased request reported among its top logprobs (with the same raw
// log probability: logprobs are the model's distribution, not the biased one); +100 forces a
// token, greedy or sampled, whole or streamed, with n > 1 and on chat; bad biases are refused
// by name and the server goes on serving.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/http_client.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

using nlohmann::json;

constexpr char kPrompt[] = "In the beginning God created the heaven";

class HttpLogitBiasTest : public ServerTest {
 protected:
  void SetUp() override { StartServer({"--max-slots=8", "--http-listen=127.0.0.1:0"}); }
  int port() const { return server_->http_port(); }
};

TEST_F(HttpLogitBiasTest, BanningTheGreedyTokenGivesTheRunnerUpWithItsRawLogprob) {
  ASSERT_GT(port(), 0) << server_->log();
  json body = {{"prompt", kPrompt}, {"max_tokens", 1},    {"temperature", 0},
               {"logprobs", 3},     {"ignore_eos", true}, {"return_token_ids", true}};
  const HttpResult plain = PostJson(port(), "/v1/completions", body);
  ASSERT_EQ(plain.status, 200) << plain.body;
  const json& choice = plain.json["choices"][0];
  const int greedy = choice["token_ids"][0];
  const std::string greedy_text = choice["text"];
  // The runner-up: the likeliest alternative other than the greedy token.
  std::string runner_up;
  double runner_up_logprob = -1e30;
  for (const auto& [text, logprob] : choice["logprobs"]["top_logprobs"][0].items()) {
    if (text != greedy_text && logprob.get<double>() > runner_up_logprob) {
      runner_up = text;
      runner_up_logprob = logprob;
    }
  }
  ASSERT_FALSE(runner_up.empty()) << plain.body;

  body["logit_bias"] = {{std::to_string(greedy), -100}};
  const HttpResult banned = PostJson(port(), "/v1/completions", body);
  ASSERT_EQ(banned.status, 200) << banned.body;
  const json& other = banned.json["choices"][0];
  EXPECT_NE(other["token_ids"][0].get<int>(), greedy);
  EXPECT_EQ(other["text"], runner_up);
  EXPECT_NEAR(other["logprobs"]["token_logprobs"][0].get<double>(), runner_up_logprob, 1e-4)
      << "logprobs are the model's raw distribution, not the biased one";
}

// Every token of `ids` is `id`.
void ExpectAll(const json& ids, int id, size_t count) {
  ASSERT_EQ(ids.size(), count) << ids;
  for (const json& token : ids) EXPECT_EQ(token.get<int>(), id) << ids;
}

TEST_F(HttpLogitBiasTest, APlusHundredBiasForcesTheTokenGreedyOrSampled) {
  ASSERT_GT(port(), 0) << server_->log();
  constexpr int kForced = 42;
  const json bias = {{std::to_string(kForced), 100}, {"7", -100}};
  const HttpResult greedy = PostJson(port(), "/v1/completions",
                                     {{"prompt", kPrompt},
                                      {"max_tokens", 6},
                                      {"temperature", 0},
                                      {"ignore_eos", true},
                                      {"logit_bias", bias},
                                      {"return_token_ids", true}});
  ASSERT_EQ(greedy.status, 200) << greedy.body;
  ExpectAll(greedy.json["choices"][0]["token_ids"], kForced, 6);

  // Sampled, two choices forked from one prefill, streamed: each choice's ids.
  const SseResult stream = PostStream(port(), "/v1/completions",
                                      {{"prompt", kPrompt},
                                       {"max_tokens", 5},
                                       {"temperature", 1.0},
                                       {"seed", 11},
                                       {"n", 2},
                                       {"ignore_eos", true},
                                       {"logit_bias", bias},
                                       {"return_token_ids", true},
                                       {"stream", true}});
  ASSERT_EQ(stream.status, 200) << stream.raw;
  std::vector<json> ids(2, json::array());
  for (const json& event : stream.events) {
    if (!event.contains("choices") || event["choices"].empty()) continue;
    const json& delta = event["choices"][0];
    if (!delta.contains("token_ids")) continue;
    for (const json& id : delta["token_ids"]) ids.at(delta["index"].get<int>()).push_back(id);
  }
  ExpectAll(ids[0], kForced, 5);
  ExpectAll(ids[1], kForced, 5);

  // Chat takes the same parameter.
  const HttpResult chat =
      PostJson(port(), "/v1/chat/completions",
               {{"messages", {{{"role", "user"}, {"content", "Who created the heaven?"}}}},
                {"max_tokens", 4},
                {"temperature", 0.7},
                {"ignore_eos", true},
                {"logit_bias", bias},
                {"return_token_ids", true}});
  ASSERT_EQ(chat.status, 200) << chat.body;
  ExpectAll(chat.json["choices"][0]["token_ids"], kForced, 4);
}

TEST_F(HttpLogitBiasTest, BadBiasesAreRefusedByNameAndTheServerGoesOn) {
  ASSERT_GT(port(), 0) << server_->log();
  struct Bad {
    json bias;
    std::string message_part;
  };
  const std::vector<Bad> cases = {
      {{{"1000000", 1}}, "logit_bias token ids must be in [0, "},
      {{{"5", 150}}, "logit_bias biases must be in [-100, 100], got 150 for token 5"},
      {{{"5", 1}, {"005", 2}}, "logit_bias lists token 5 twice"},
      {{{"five", 1}}, "logit_bias keys must be token ids"},
      {{{"5", "strong"}}, "must be a number"},
      {json::array({5}), "logit_bias must be an object"},
  };
  for (const Bad& bad : cases) {
    const HttpResult refused =
        PostJson(port(), "/v1/completions",
                 {{"prompt", kPrompt}, {"max_tokens", 2}, {"logit_bias", bad.bias}});
    EXPECT_EQ(refused.status, 400) << refused.body;
    EXPECT_EQ(refused.json["error"]["param"], "logit_bias") << refused.body;
    EXPECT_NE(refused.body.find(bad.message_part), std::string::npos) << refused.body;
  }
  const HttpResult beam = PostJson(port(), "/v1/completions",
                                   {{"prompt", kPrompt},
                                    {"max_tokens", 2},
                                    {"use_beam_search", true},
                                    {"best_of", 2},
                                    {"logit_bias", {{"5", 1}}}});
  EXPECT_EQ(beam.status, 400) << beam.body;
  EXPECT_EQ(beam.json["error"]["param"], "logit_bias") << beam.body;
  // An empty object is no bias.
  const HttpResult served =
      PostJson(port(), "/v1/completions",
               {{"prompt", kPrompt}, {"max_tokens", 2}, {"logit_bias", json::object()}});
  EXPECT_EQ(served.status, 200) << served.body;
}

}  // namespace
}  // namespace slotserve::testing
