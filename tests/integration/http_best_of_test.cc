// best_of > n on /v1/completions with a real server. The independent check is the same request
// with n = best_of: its choices are the candidates (choice i samples with seed + i either way),
// ranked here by their mean token logprob; best_of must return the best n of them, best first,
// for every prompt of a batch, and without logprobs when none were asked for.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "tests/integration/http_client.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

using nlohmann::json;

class HttpBestOfTest : public ServerTest {
 protected:
  void SetUp() override { StartServer({"--max-slots=8", "--http-listen=127.0.0.1:0"}); }
  int port() const { return server_->http_port(); }
};

// The texts of `choices` (one prompt's, with logprobs) from the best mean logprob down.
std::vector<std::string> RankedTexts(const json& choices) {
  std::vector<std::pair<double, std::string>> ranked;
  for (const json& choice : choices) {
    const json& logprobs = choice["logprobs"]["token_logprobs"];
    double sum = 0.0;
    for (const json& logprob : logprobs) sum += logprob.get<double>();
    ranked.emplace_back(-sum / static_cast<double>(logprobs.size()), choice["text"]);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> texts;
  for (const auto& [mean, text] : ranked) texts.push_back(text);
  return texts;
}

TEST_F(HttpBestOfTest, TheBestNOfTheCandidatesComeBackBestFirst) {
  ASSERT_GT(port(), 0) << server_->log();
  const json prompts = {"In the beginning God", "And the earth was"};
  json body = {{"prompt", prompts},  {"n", 4},          {"seed", 19},
               {"temperature", 1.2}, {"max_tokens", 6}, {"logprobs", 0}};
  const HttpResult candidates = PostJson(port(), "/v1/completions", body);
  ASSERT_EQ(candidates.status, 200) << candidates.body;
  body["n"] = 2;
  body["best_of"] = 4;
  const HttpResult best = PostJson(port(), "/v1/completions", body);
  ASSERT_EQ(best.status, 200) << best.body;
  ASSERT_EQ(best.json["choices"].size(), 4u) << best.body;
  for (int p = 0; p < 2; ++p) {
    const json own(candidates.json["choices"].begin() + 4 * p,
                   candidates.json["choices"].begin() + 4 * p + 4);
    const std::vector<std::string> ranked = RankedTexts(own);
    for (int rank = 0; rank < 2; ++rank) {
      const json& choice = best.json["choices"][2 * p + rank];
      EXPECT_EQ(choice["index"], 2 * p + rank);
      EXPECT_EQ(choice["text"], ranked[rank]) << "prompt " << p << ", rank " << rank;
    }
  }
  // Without logprobs asked for, the same choices, without them.
  body.erase("logprobs");
  const HttpResult plain = PostJson(port(), "/v1/completions", body);
  ASSERT_EQ(plain.status, 200) << plain.body;
  for (int index = 0; index < 4; ++index) {
    EXPECT_EQ(plain.json["choices"][index]["text"], best.json["choices"][index]["text"]);
    EXPECT_TRUE(plain.json["choices"][index]["logprobs"].is_null());
  }
  // Streaming cannot rank.
  body["stream"] = true;
  const HttpResult refused = PostJson(port(), "/v1/completions", body);
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(refused.json["error"]["param"], "best_of");
}

}  // namespace
}  // namespace slotserve::testing
