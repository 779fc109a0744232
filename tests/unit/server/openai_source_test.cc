// The HTTP API's "source" extension (server/http/openai_source.h) on /v1/completions: for an
// encoder-decoder model a text source is tokenised without BOS and ends with eos, ids pass as
// given, the prompt is an optional target prefix without BOS; a missing source, a source for a
// decoder-only model and chat on a seq2seq model are refused naming the parameter; the
// engine's source messages are renamed to "source".
#include "server/http/openai_source.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "server/http/openai_errors.h"
#include "server/http/openai_request.h"
#include "tests/unit/engine/tiny_tokenizer.h"

namespace slotserve::server::http {
namespace {

using nlohmann::json;

constexpr int kBos = 1;
constexpr int kEos = 2;

class OpenAiSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tokenizer_ = engine::testing::TinyTokenizerOrFail();
    ASSERT_NE(tokenizer_, nullptr);
    seq2seq_ = ServedModel{"mt", tokenizer_, kBos, &chat_template_, /*seq2seq=*/true, kEos};
    decoder_only_ = ServedModel{"tiny", tokenizer_, kBos, &chat_template_};
  }

  std::vector<int32_t> Pieces(const std::string& text) { return *tokenizer_->Encode(text); }

  ApiError Error(const absl::StatusOr<OpenAiRequest>& parsed) {
    EXPECT_FALSE(parsed.ok());
    return parsed.ok() ? ApiError() : ToApiError(parsed.status());
  }

  const engine::Tokenizer* tokenizer_ = nullptr;
  ChatTemplate chat_template_ = ChatTemplate::Default();
  ServedModel seq2seq_, decoder_only_;
};

TEST_F(OpenAiSourceTest, ATextSourceEndsWithEosAndThePromptIsAnOptionalPrefixWithoutBos) {
  absl::StatusOr<OpenAiRequest> parsed =
      ParseCompletionRequest({{"source", "In the beginning"}}, seq2seq_);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  std::vector<int32_t> expected = Pieces("In the beginning");
  expected.push_back(kEos);
  EXPECT_EQ(parsed->generation.source_ids, expected);
  EXPECT_TRUE(parsed->generation.prompt_ids.empty());

  parsed = ParseCompletionRequest({{"source", "In the beginning"}, {"prompt", "God"}}, seq2seq_);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->generation.prompt_ids, Pieces("God"));  // no BOS
}

TEST_F(OpenAiSourceTest, SourceIdsPassAsGiven) {
  absl::StatusOr<OpenAiRequest> parsed =
      ParseCompletionRequest({{"source", {5, 6, 7}}, {"prompt", ""}}, seq2seq_);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->generation.source_ids, (std::vector<int32_t>{5, 6, 7}));
  EXPECT_TRUE(parsed->generation.prompt_ids.empty());
  // No target prefix as token ids: [] means what "" means (a decoder-only prompt may not be
  // empty).
  parsed = ParseCompletionRequest({{"source", {5, 6, 7}}, {"prompt", json::array()}}, seq2seq_);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->generation.prompt_ids.empty());
  EXPECT_EQ(Error(ParseCompletionRequest({{"prompt", json::array()}}, decoder_only_)).param,
            "prompt");
}

TEST_F(OpenAiSourceTest, RefusalsNameTheParameter) {
  ApiError error = Error(ParseCompletionRequest({{"prompt", "x"}}, seq2seq_));
  EXPECT_EQ(error.param, "source");
  EXPECT_TRUE(absl::StrContains(error.message, "source is required")) << error.message;

  error = Error(ParseCompletionRequest({{"prompt", "x"}, {"source", "Im Anfang"}}, decoder_only_));
  EXPECT_EQ(error.param, "source");
  EXPECT_EQ(error.code, "unsupported_value");

  EXPECT_EQ(Error(ParseCompletionRequest({{"source", ""}}, seq2seq_)).param, "source");
  EXPECT_EQ(Error(ParseCompletionRequest({{"source", json::array()}}, seq2seq_)).param, "source");
  EXPECT_EQ(Error(ParseCompletionRequest({{"source", 3}}, seq2seq_)).param, "source");
  // One target prefix per source: a batch of prompts is refused beside it.
  error =
      Error(ParseCompletionRequest({{"source", "Im Anfang"}, {"prompt", {"In", "At"}}}, seq2seq_));
  EXPECT_EQ(error.param, "prompt");
  EXPECT_EQ(error.code, "unsupported_value");
  EXPECT_TRUE(absl::StrContains(error.message, "got 2")) << error.message;

  error =
      Error(ParseChatRequest({{"messages", {{{"role", "user"}, {"content", "hi"}}}}}, seq2seq_));
  EXPECT_EQ(error.param, "messages");
  EXPECT_TRUE(absl::StrContains(error.message, "/v1/completions")) << error.message;
}

TEST_F(OpenAiSourceTest, TheEnginesSourceMessagesAreRenamedToTheParameter) {
  const ApiError error =
      ToApiError(absl::InvalidArgumentError("source_ids[1] must be a token id in [0, 29), got 40"));
  EXPECT_EQ(error.param, "source[1]");
  EXPECT_EQ(error.message, "source[1] must be a token id in [0, 29), got 40");
  EXPECT_EQ(ToApiError(absl::InvalidArgumentError("source must be at most 5 tokens, got 6")).param,
            "source");
}

}  // namespace
}  // namespace slotserve::server::http
