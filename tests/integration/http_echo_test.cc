// The completions API's echo (the prompt returned before the completion) on a real server,
// with and without logprobs, whole and streamed. The prompt's log probabilities come from a
// prefill that keeps every row's logits; they are checked against the other path that gives
// a token's log probability, generation: the prompt's last token, scored by echo, must carry
// the log probability it had when a greedy request generated it after the rest of the prompt.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/http_client.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

using nlohmann::json;

class HttpEchoTest : public ServerTest {
 protected:
  void SetUp() override { StartServer({"--max-slots=8", "--http-listen=127.0.0.1:0"}); }
  int port() const { return server_->http_port(); }
};

// Each token's text sits at its text_offset in `text`, in order, covering the whole text.
void ExpectOffsetsIndexTheText(const json& logprobs, const std::string& text) {
  const json& tokens = logprobs["tokens"];
  const json& offsets = logprobs["text_offset"];
  ASSERT_EQ(tokens.size(), offsets.size());
  size_t end = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string token = tokens[i];
    const size_t offset = offsets[i];  // code points; the prompts here are ASCII
    EXPECT_EQ(offset, end) << "token " << i << " '" << token << "'";
    EXPECT_EQ(text.substr(offset, token.size()), token) << "token " << i;
    end = offset + token.size();
  }
  EXPECT_EQ(end, text.size());
}

TEST_F(HttpEchoTest, ThePromptComesFirstWithItsTokensScoredAsGenerationScoresThem) {
  ASSERT_GT(port(), 0) << server_->log();
  const std::string prompt = "In the beginning God created the heaven";
  // The greedy next token after the prompt, and its log probability as generated.
  const HttpResult generated = PostJson(port(), "/v1/completions",
                                        {{"prompt", prompt},
                                         {"max_tokens", 1},
                                         {"temperature", 0},
                                         {"logprobs", 0},
                                         {"ignore_eos", true}});
  ASSERT_EQ(generated.status, 200) << generated.body;
  const std::string next_text = generated.json["choices"][0]["text"];
  const double next_logprob = generated.json["choices"][0]["logprobs"]["token_logprobs"][0];
  const int prompt_tokens = generated.json["usage"]["prompt_tokens"];

  const std::string extended = prompt + next_text;
  const HttpResult echoed = PostJson(port(), "/v1/completions",
                                     {{"prompt", extended},
                                      {"max_tokens", 2},
                                      {"temperature", 0},
                                      {"logprobs", 2},
                                      {"echo", true},
                                      {"ignore_eos", true}});
  ASSERT_EQ(echoed.status, 200) << echoed.body;
  const json& choice = echoed.json["choices"][0];
  const std::string text = choice["text"];
  ASSERT_EQ(text.substr(0, extended.size()), extended);
  const json& logprobs = choice["logprobs"];
  const int echoed_prompt_tokens = echoed.json["usage"]["prompt_tokens"];
  ASSERT_EQ(echoed_prompt_tokens, prompt_tokens + 1);
  ASSERT_EQ(logprobs["tokens"].size(), static_cast<size_t>(echoed_prompt_tokens + 2));
  EXPECT_TRUE(logprobs["token_logprobs"][0].is_null()) << "the first token has no context";
  EXPECT_TRUE(logprobs["top_logprobs"][0].is_null());
  for (int i = 1; i < echoed_prompt_tokens + 2; ++i) {
    const double logprob = logprobs["token_logprobs"][i];
    EXPECT_LE(logprob, 0.0) << "token " << i;
    // The alternatives (2) and the token itself, keyed by text.
    EXPECT_GE(logprobs["top_logprobs"][i].size(), 2u) << "token " << i;
    EXPECT_LE(logprobs["top_logprobs"][i].size(), 3u) << "token " << i;
  }
  EXPECT_NEAR(logprobs["token_logprobs"][echoed_prompt_tokens - 1].get<double>(), next_logprob,
              1e-4)
      << "the prompt's last token, scored by echo, against its log probability when generated";
  ExpectOffsetsIndexTheText(logprobs, text);

  // Streamed, with two choices: each choice's first chunk is the echo, logprobs and all.
  json streamed = {{"prompt", extended}, {"max_tokens", 3}, {"logprobs", 1},
                   {"echo", true},       {"n", 2},          {"seed", 5},
                   {"stream", true}};
  const SseResult stream = PostStream(port(), "/v1/completions", streamed);
  ASSERT_EQ(stream.status, 200) << stream.raw;
  std::vector<std::string> texts(2);
  std::vector<bool> seen(2, false);
  for (const json& event : stream.events) {
    if (!event.contains("choices") || event["choices"].empty()) continue;
    const json& delta = event["choices"][0];
    const int index = delta["index"];
    ASSERT_LT(index, 2);
    if (!seen[index]) {
      EXPECT_EQ(delta["text"], extended) << "choice " << index << "'s first chunk";
      EXPECT_EQ(delta["logprobs"]["tokens"].size(), static_cast<size_t>(echoed_prompt_tokens));
      EXPECT_NEAR(delta["logprobs"]["token_logprobs"][echoed_prompt_tokens - 1].get<double>(),
                  next_logprob, 1e-4);
      seen[index] = true;
    }
    texts[index] += delta["text"].get<std::string>();
  }
  EXPECT_TRUE(seen[0] && seen[1]);
  for (const std::string& choice_text : texts) {
    EXPECT_EQ(choice_text.substr(0, extended.size()), extended);
    EXPECT_GT(choice_text.size(), extended.size());
  }
}

TEST_F(HttpEchoTest, WithoutLogprobsTheTextAloneIsEchoedAsSentOrDecoded) {
  const std::string prompt = "And God said";
  const HttpResult plain =
      PostJson(port(), "/v1/completions",
               {{"prompt", prompt}, {"max_tokens", 4}, {"temperature", 0}, {"ignore_eos", true}});
  ASSERT_EQ(plain.status, 200) << plain.body;
  const std::string completion = plain.json["choices"][0]["text"];
  const HttpResult echoed = PostJson(port(), "/v1/completions",
                                     {{"prompt", prompt},
                                      {"max_tokens", 4},
                                      {"temperature", 0},
                                      {"ignore_eos", true},
                                      {"echo", true}});
  ASSERT_EQ(echoed.status, 200) << echoed.body;
  EXPECT_EQ(echoed.json["choices"][0]["text"], prompt + completion);
  EXPECT_TRUE(echoed.json["choices"][0]["logprobs"].is_null());

  json streamed = {{"prompt", prompt},   {"max_tokens", 4}, {"temperature", 0},
                   {"ignore_eos", true}, {"echo", true},    {"stream", true}};
  const SseResult stream = PostStream(port(), "/v1/completions", streamed);
  ASSERT_EQ(stream.status, 200) << stream.raw;
  EXPECT_EQ(stream.text, prompt + completion);
  ASSERT_FALSE(stream.events.empty());
  EXPECT_EQ(stream.events[0]["choices"][0]["text"], prompt) << "the echo is the first chunk";

  // Token ids are echoed as their decoded text.
  const HttpResult ids = PostJson(port(), "/v1/completions",
                                  {{"prompt", {17, 42}}, {"max_tokens", 1}, {"echo", true}});
  ASSERT_EQ(ids.status, 200) << ids.body;
  const HttpResult decoded =
      PostJson(port(), "/v1/completions",
               {{"prompt", {17, 42}}, {"max_tokens", 1}, {"echo", true}, {"logprobs", 0}});
  ASSERT_EQ(decoded.status, 200) << decoded.body;
  const json& tokens = decoded.json["choices"][0]["logprobs"]["tokens"];
  const std::string ids_text = ids.json["choices"][0]["text"];
  EXPECT_EQ(
      ids_text.substr(0, tokens[0].get<std::string>().size() + tokens[1].get<std::string>().size()),
      tokens[0].get<std::string>() + tokens[1].get<std::string>());
}

TEST_F(HttpEchoTest, AOneTokenPromptIsEchoedOncePerChoiceBeforeItsTokens) {
  // Nothing to score: the echo goes out at once, its one token with a null log probability.
  json streamed = {{"prompt", {17}}, {"max_tokens", 3}, {"logprobs", 0}, {"echo", true},
                   {"n", 2},         {"seed", 1},       {"stream", true}};
  const SseResult stream = PostStream(port(), "/v1/completions", streamed);
  ASSERT_EQ(stream.status, 200) << stream.raw;
  std::vector<int> chunks(2, 0);
  for (const json& event : stream.events) {
    if (!event.contains("choices") || event["choices"].empty()) continue;
    const json& delta = event["choices"][0];
    const int index = delta["index"];
    ASSERT_LT(index, 2);
    const bool echo = !delta["logprobs"].is_null() &&
                      delta["logprobs"]["token_logprobs"].size() == 1 &&
                      delta["logprobs"]["token_logprobs"][0].is_null();
    EXPECT_EQ(echo, chunks[index] == 0)
        << "choice " << index << ", chunk " << chunks[index] << ": " << delta.dump();
    ++chunks[index];
  }
  EXPECT_GT(chunks[0], 1);
  EXPECT_GT(chunks[1], 1);
}

TEST_F(HttpEchoTest, EchoWithLogprobsRefusesWhatCannotScoreThePrompt) {
  // A beam search reports no logprobs at all.
  const HttpResult beam = PostJson(port(), "/v1/completions",
                                   {{"prompt", "And God"},
                                    {"max_tokens", 4},
                                    {"best_of", 3},
                                    {"use_beam_search", true},
                                    {"logprobs", 1},
                                    {"echo", true}});
  EXPECT_EQ(beam.status, 400) << beam.body;
  EXPECT_EQ(beam.json["error"]["param"], "logprobs") << beam.body;
  const HttpResult wrong_type =
      PostJson(port(), "/v1/completions", {{"prompt", "And"}, {"echo", "yes"}});
  EXPECT_EQ(wrong_type.status, 400) << wrong_type.body;
  EXPECT_EQ(wrong_type.json["error"]["param"], "echo") << wrong_type.body;
}

}  // namespace
}  // namespace slotserve::testing
