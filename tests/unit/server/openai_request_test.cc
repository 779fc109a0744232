// The HTTP API's edge: OpenAI-style JSON bodies become engine requests; what the shape decides
// is refused here naming the parameter, numeric limits are left to the engine.
#include "server/http/openai_request.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "engine/request_validation.h"
#include "server/http/openai_errors.h"
#include "tests/unit/engine/tiny_tokenizer.h"

namespace slotserve::server::http {
namespace {

using nlohmann::json;

class OpenAiRequestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tokenizer_ = engine::testing::TinyTokenizerOrFail();
    ASSERT_NE(tokenizer_, nullptr);
    model_ = ServedModel{"tiny", tokenizer_, /*bos_id=*/1, &chat_template_};
  }

  OpenAiRequest Completion(const json& body) {
    absl::StatusOr<OpenAiRequest> parsed = ParseCompletionRequest(body, model_);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    return parsed.ok() ? *parsed : OpenAiRequest();
  }
  OpenAiRequest Chat(const json& body) {
    absl::StatusOr<OpenAiRequest> parsed = ParseChatRequest(body, model_);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    return parsed.ok() ? *parsed : OpenAiRequest();
  }
  // The error a refused body gets, as the client would see it.
  ApiError CompletionError(const json& body) {
    absl::StatusOr<OpenAiRequest> parsed = ParseCompletionRequest(body, model_);
    EXPECT_FALSE(parsed.ok()) << body.dump();
    return parsed.ok() ? ApiError() : ToApiError(parsed.status());
  }
  ApiError ChatError(const json& body) {
    absl::StatusOr<OpenAiRequest> parsed = ParseChatRequest(body, model_);
    EXPECT_FALSE(parsed.ok()) << body.dump();
    return parsed.ok() ? ApiError() : ToApiError(parsed.status());
  }
  std::vector<int32_t> Encode(const std::string& text) {
    std::vector<int32_t> ids = {1};
    const std::vector<int32_t> pieces = *tokenizer_->Encode(text);
    ids.insert(ids.end(), pieces.begin(), pieces.end());
    return ids;
  }

  const engine::Tokenizer* tokenizer_ = nullptr;
  ChatTemplate chat_template_ = ChatTemplate::Default();
  ServedModel model_;
};

TEST_F(OpenAiRequestTest, CompletionDefaultsFollowOpenAi) {
  const OpenAiRequest request = Completion({{"prompt", "In the beginning"}});
  EXPECT_EQ(request.generation.prompt_ids, Encode("In the beginning"));  // BOS first
  EXPECT_EQ(request.generation.stopping.max_new_tokens, kCompletionsDefaultMaxTokens);
  EXPECT_EQ(request.generation.sampling.temperature, 1.0f);
  EXPECT_FALSE(request.generation.sampling.seed.has_value());
  EXPECT_FALSE(request.stream);
  EXPECT_FALSE(request.generation.logprobs.enabled);
  EXPECT_EQ(request.model, "tiny");
}

TEST_F(OpenAiRequestTest, EveryParameterReachesTheEngineRequest) {
  const OpenAiRequest request = Completion({{"model", "tiny"},
                                            {"prompt", {"x"}},
                                            {"max_tokens", 40},
                                            {"temperature", 0.5},
                                            {"top_p", 0.9},
                                            {"top_k", -1},
                                            {"min_p", 0.05},
                                            {"repetition_penalty", 1.1},
                                            {"presence_penalty", 0.5},
                                            {"frequency_penalty", -0.5},
                                            {"seed", -1},
                                            {"logit_bias", {{"5", -100}, {"17", 2.5}}},
                                            {"stop", "\n"},
                                            {"stop_token_ids", {2, 3}},
                                            {"ignore_eos", true},
                                            {"min_tokens", 4},
                                            {"logprobs", 3},
                                            {"n", 1},
                                            {"best_of", nullptr},
                                            {"echo", false},
                                            {"user", "someone"},
                                            {"stream", true},
                                            {"stream_options", {{"include_usage", true}}},
                                            {"return_token_ids", true}});
  const engine::GenerationRequest& g = request.generation;
  EXPECT_EQ(g.prompt_ids, Encode("x"));  // a batch of one
  EXPECT_EQ(g.stopping.max_new_tokens, 40);
  EXPECT_FLOAT_EQ(g.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(g.sampling.top_p, 0.9f);
  EXPECT_EQ(g.sampling.top_k, 0);  // vLLM's -1 = off
  EXPECT_FLOAT_EQ(g.sampling.min_p, 0.05f);
  EXPECT_FLOAT_EQ(g.sampling.repetition_penalty, 1.1f);
  EXPECT_FLOAT_EQ(g.sampling.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(g.sampling.frequency_penalty, -0.5f);
  EXPECT_EQ(g.sampling.seed, UINT64_MAX);  // a negative seed wraps
  ASSERT_EQ(g.sampling.logit_bias.size(), 2u);
  EXPECT_EQ(g.sampling.logit_bias[0].id, 5);
  EXPECT_FLOAT_EQ(g.sampling.logit_bias[0].bias, -100.0f);
  EXPECT_EQ(g.sampling.logit_bias[1].id, 17);
  EXPECT_FLOAT_EQ(g.sampling.logit_bias[1].bias, 2.5f);
  EXPECT_EQ(g.stopping.stop_sequences, std::vector<std::string>{"\n"});
  EXPECT_EQ(g.stopping.stop_token_ids, (std::vector<int32_t>{2, 3}));
  EXPECT_TRUE(g.stopping.ignore_eos);
  EXPECT_EQ(g.stopping.min_new_tokens, 4);
  EXPECT_TRUE(g.logprobs.enabled);
  EXPECT_EQ(g.logprobs.top_n, 3);
  EXPECT_TRUE(request.stream);
  EXPECT_TRUE(request.include_usage);
  EXPECT_TRUE(request.return_token_ids);
}

TEST_F(OpenAiRequestTest, SeveralChoicesReachTheEngineAsN) {
  EXPECT_EQ(Completion({{"prompt", "x"}, {"n", 3}}).generation.n, 3);
  EXPECT_EQ(Completion({{"prompt", "x"}, {"n", 2}, {"best_of", 2}}).generation.n, 2);
  EXPECT_EQ(Chat({{"messages", {{{"role", "user"}, {"content", "x"}}}}, {"n", 4}}).generation.n, 4);
  EXPECT_EQ(Completion({{"prompt", "x"}}).generation.n, 1);
}

// best_of > n: the engine generates best_of choices and the answer keeps n; it needs logprobs
// to rank them, which the answer leaves out when the client did not ask for them.
TEST_F(OpenAiRequestTest, BestOfAboveNGeneratesBestOfAndKeepsN) {
  OpenAiRequest request = Completion({{"prompt", "x"}, {"n", 2}, {"best_of", 5}});
  EXPECT_EQ(request.generation.n, 5);
  EXPECT_EQ(request.keep_best, 2);
  EXPECT_TRUE(request.generation.logprobs.enabled);
  EXPECT_EQ(request.generation.logprobs.top_n, 0);
  EXPECT_TRUE(request.hide_logprobs);
  EXPECT_EQ(request.names.n, "best_of");
  request = Completion({{"prompt", "x"}, {"best_of", 3}, {"logprobs", 2}, {"echo", true}});
  EXPECT_EQ(request.keep_best, 1);
  EXPECT_FALSE(request.hide_logprobs);
  EXPECT_EQ(request.generation.logprobs.top_n, 2);
  EXPECT_TRUE(request.generation.logprobs.prompt);
  // Hidden logprobs do not make an echo score its prompt.
  request = Completion({{"prompt", "x"}, {"best_of", 3}, {"echo", true}});
  EXPECT_FALSE(request.generation.logprobs.prompt);
  request = Completion({{"prompt", "x"}, {"n", 2}, {"best_of", 2}});
  EXPECT_EQ(request.keep_best, 0);
  EXPECT_FALSE(request.generation.logprobs.enabled);

  ApiError error = CompletionError({{"prompt", "x"}, {"n", 3}, {"best_of", 2}});
  EXPECT_EQ(error.param, "best_of");
  EXPECT_EQ(error.message, "best_of must be >= n (3), got 2");
  error = CompletionError({{"prompt", "x"}, {"best_of", 2}, {"stream", true}});
  EXPECT_EQ(error.param, "best_of");
  EXPECT_EQ(error.message,
            "best_of (2) > n (1) cannot be streamed: the best are known only at the end");
}

// vLLM's beam search parameters: best_of is the width, n the hypotheses returned as choices.
TEST_F(OpenAiRequestTest, BeamSearchReachesTheEngineAsBeamOptions) {
  const OpenAiRequest beam = Completion({{"prompt", "x"},
                                         {"use_beam_search", true},
                                         {"best_of", 4},
                                         {"n", 2},
                                         {"length_penalty", 0.5}});
  EXPECT_EQ(beam.generation.beam.width, 4);
  EXPECT_EQ(beam.generation.beam.n_best, 2);
  EXPECT_EQ(beam.generation.beam.length_penalty, 0.5);
  EXPECT_EQ(beam.generation.n, 1);  // one search; its n-best become the choices
  EXPECT_EQ(beam.generation.sampling.temperature, 0.0f);  // unset: deterministic
  // Chat: refused when the template ends a turn at text (beam search takes no stop sequence),
  // as the default template does; served with one that does not.
  const json chat = {{"messages", {{{"role", "user"}, {"content", "x"}}}},
                     {"use_beam_search", true},
                     {"best_of", 3}};
  EXPECT_EQ(ChatError(chat).param, "use_beam_search");
  absl::StatusOr<ChatTemplate> no_stop = ChatTemplate::Parse(
      R"({"format": "slotserve-chat-template", "format_version": 1,
          "messages": {"user": "Q: {content}\n"}, "generation_prompt": "A:"})",
      "test template");
  ASSERT_TRUE(no_stop.ok()) << no_stop.status();
  ServedModel stopless = model_;
  stopless.chat_template = &*no_stop;
  absl::StatusOr<OpenAiRequest> served = ParseChatRequest(chat, stopless);
  ASSERT_TRUE(served.ok()) << served.status();
  EXPECT_EQ(served->generation.beam.width, 3);
  EXPECT_EQ(served->generation.beam.n_best, 1);
  EXPECT_EQ(served->generation.beam.length_penalty, 0.0);
  EXPECT_FALSE(Completion({{"prompt", "x"}, {"use_beam_search", false}}).generation.beam.enabled());

  ApiError error = CompletionError({{"prompt", "x"}, {"use_beam_search", true}});
  EXPECT_EQ(error.param, "best_of");
  EXPECT_EQ(error.message,
            "best_of (the beam width) must be > 1 with \"use_beam_search\": true, got 1");
  error = CompletionError({{"prompt", "x"}, {"length_penalty", 1.0}});
  EXPECT_EQ(error.param, "length_penalty");
  EXPECT_EQ(error.message, "length_penalty needs \"use_beam_search\": true");
  error = CompletionError({{"prompt", "x"}, {"use_beam_search", "yes"}});
  EXPECT_EQ(error.param, "use_beam_search");
  // The count the client sent is quoted, not the engine's boolean.
  error = CompletionError(
      {{"prompt", "x"}, {"use_beam_search", true}, {"best_of", 2}, {"logprobs", 3}});
  EXPECT_EQ(error.param, "logprobs");
  EXPECT_TRUE(absl::EndsWith(error.message, "got 3")) << error.message;
  EXPECT_TRUE(
      Completion(
          {{"prompt", "x"}, {"use_beam_search", true}, {"best_of", 2}, {"logprobs", nullptr}})
          .generation.beam.enabled());
}

TEST_F(OpenAiRequestTest, TokenIdPromptsAreUsedAsGivenAndNullMeansUnset) {
  const OpenAiRequest request = Completion({{"prompt", {5, 6, 7}},
                                            {"temperature", nullptr},
                                            {"max_tokens", 8.0},
                                            {"logprobs", nullptr}});
  EXPECT_EQ(request.generation.prompt_ids, (std::vector<int32_t>{5, 6, 7}));
  EXPECT_EQ(request.generation.sampling.temperature, 1.0f);
  EXPECT_EQ(request.generation.stopping.max_new_tokens, 8);
  EXPECT_FALSE(request.generation.logprobs.enabled);
  EXPECT_EQ(Completion({{"prompt", {{9, 10}}}}).generation.prompt_ids,
            (std::vector<int32_t>{9, 10}));
}

TEST_F(OpenAiRequestTest, WrongTypesNameTheParameterAndQuoteTheValue) {
  ApiError error = CompletionError({{"prompt", "x"}, {"temperature", "hot"}});
  EXPECT_EQ(error.http_status, 400);
  EXPECT_EQ(error.type, "invalid_request_error");
  EXPECT_EQ(error.param, "temperature");
  EXPECT_EQ(error.code, "invalid_type");
  EXPECT_EQ(error.message, "temperature must be a number, got \"hot\"");
  error = CompletionError({{"prompt", "x"}, {"max_tokens", 1.5}});
  EXPECT_EQ(error.param, "max_tokens");
  EXPECT_TRUE(absl::StrContains(error.message, "got 1.5")) << error.message;
  error = CompletionError({{"prompt", "x"}, {"stop", {"a", 7}}});
  EXPECT_EQ(error.param, "stop[1]");
  error = CompletionError({{"prompt", "x"}, {"logprobs", true}});
  EXPECT_EQ(error.param, "logprobs");
  error = CompletionError({{"prompt", {1, "two"}}});
  EXPECT_EQ(error.param, "prompt[1]");
  error = CompletionError({{"prompt", "x"}, {"max_tokens", 0}});
  EXPECT_EQ(error.param, "max_tokens");
  EXPECT_EQ(error.code, "invalid_value");
}

TEST_F(OpenAiRequestTest, UnknownAndUnsupportedParametersAreRefusedByName) {
  ApiError error = CompletionError({{"prompt", "x"}, {"temprature", 0}});
  EXPECT_EQ(error.param, "temprature");
  EXPECT_EQ(error.code, "unknown_parameter");
  EXPECT_EQ(CompletionError({{"prompt", "x"}, {"n", 0}}).code, "invalid_value");
  EXPECT_EQ(CompletionError({{"prompt", "x"}, {"echo", "yes"}}).param, "echo");
  EXPECT_EQ(CompletionError({{"prompt", "x"}, {"suffix", "end"}}).param, "suffix");
  error = CompletionError({{"prompt", "x"}, {"logit_bias", {{"five", 1}}}});
  EXPECT_EQ(error.param, "logit_bias");
  EXPECT_EQ(error.message, "logit_bias keys must be token ids (decimal integers), got \"five\"");
  error = CompletionError({{"prompt", "x"}, {"logit_bias", {{"5", "high"}}}});
  EXPECT_EQ(error.message, "logit_bias[\"5\"] must be a number, got \"high\"");
  EXPECT_EQ(CompletionError({{"prompt", "x"}, {"logit_bias", {1, 2}}}).param, "logit_bias");
  EXPECT_EQ(CompletionError({{"prompt", "x"}, {"logit_bias", {{"99999999999", 1}}}}).param,
            "logit_bias");
  EXPECT_EQ(CompletionError({{"prompt", "x"}, {"source", "Im Anfang"}}).code, "unsupported_value");
  EXPECT_EQ(CompletionError(json::object()).param, "prompt");
  EXPECT_EQ(CompletionError({{"prompt", ""}}).param, "prompt");
  error = CompletionError({{"prompt", "x"}, {"stream_options", {{"include_usage", true}}}});
  EXPECT_EQ(error.param, "stream_options");
  error = CompletionError(
      {{"prompt", "x"}, {"stream", true}, {"stream_options", {{"continuous", true}}}});
  EXPECT_EQ(error.param, "stream_options.continuous");
  EXPECT_EQ(error.code, "unknown_parameter");
  error = CompletionError(json::array({1}));
  EXPECT_EQ(error.http_status, 400);
  EXPECT_FALSE(error.param.has_value());
}

TEST_F(OpenAiRequestTest, EchoKeepsThePromptAsSentAndScoresItOnlyWithLogprobs) {
  OpenAiRequest request = Completion({{"prompt", "In the beginning"}, {"echo", true}});
  EXPECT_TRUE(request.echo);
  EXPECT_EQ(request.echo_text, "In the beginning");
  EXPECT_FALSE(request.generation.logprobs.prompt);
  request = Completion({{"prompt", {"In the beginning"}}, {"echo", true}, {"logprobs", 2}});
  EXPECT_EQ(request.echo_text, "In the beginning");
  EXPECT_TRUE(request.generation.logprobs.prompt);
  EXPECT_EQ(request.generation.logprobs.top_n, 2);
  request = Completion({{"prompt", "x"}, {"echo", false}, {"logprobs", 2}});
  EXPECT_FALSE(request.echo);
  EXPECT_FALSE(request.generation.logprobs.prompt);
  // Token ids come back decoded.
  const std::vector<int32_t> ids = Encode("the beginning");
  request =
      Completion({{"prompt", std::vector<int32_t>(ids.begin() + 1, ids.end())}, {"echo", true}});
  EXPECT_EQ(request.echo_text, "the beginning");
}

// OpenAI's batch: each element a prompt of its own, the first in generation, the rest in
// further_prompts, each with its echo text (as sent, or its ids decoded).
TEST_F(OpenAiRequestTest, ABatchOfPromptsKeepsEachWithItsEchoText) {
  const std::vector<int32_t> ids = Encode("the beginning");
  const std::vector<int32_t> without_bos(ids.begin() + 1, ids.end());
  OpenAiRequest request =
      Completion({{"prompt", {"In the beginning", without_bos, "x"}}, {"echo", true}, {"n", 2}});
  EXPECT_EQ(request.generation.prompt_ids, Encode("In the beginning"));
  EXPECT_EQ(request.echo_text, "In the beginning");
  ASSERT_EQ(request.further_prompts.size(), 2u);
  EXPECT_EQ(request.further_prompts[0].ids, without_bos);
  EXPECT_EQ(request.further_prompts[0].echo_text, "the beginning");
  EXPECT_EQ(request.further_prompts[1].ids, Encode("x"));
  EXPECT_EQ(request.further_prompts[1].echo_text, "x");
  EXPECT_EQ(request.generation.n, 2);
  // Without echo nothing is decoded.
  request = Completion({{"prompt", {"a", without_bos}}});
  EXPECT_TRUE(request.further_prompts[0].echo_text.empty());
  EXPECT_TRUE(Completion({{"prompt", {"a"}}}).further_prompts.empty());

  // An element's error names it.
  ApiError error = CompletionError({{"prompt", {"a", ""}}});
  EXPECT_EQ(error.param, "prompt[1]");
  EXPECT_EQ(error.message, "prompt[1] must not be empty");
  error = CompletionError({{"prompt", {"a", 5}}});
  EXPECT_EQ(error.param, "prompt[1]");
  EXPECT_EQ(error.message, "prompt[1] must be a string or an array of token ids, got 5");
  error = CompletionError({{"prompt", {"a", {"b", "c"}, json::array()}}});
  EXPECT_EQ(error.param, "prompt[1][0]");
  error = CompletionError({{"prompt", {"a", "b", json::array()}}});
  EXPECT_EQ(error.message, "prompt[2] must not be empty");
}

TEST_F(OpenAiRequestTest, AnotherModelNameIsNotFound) {
  const ApiError error = CompletionError({{"prompt", "x"}, {"model", "gpt-4"}});
  EXPECT_EQ(error.http_status, 404);
  EXPECT_EQ(error.param, "model");
  EXPECT_EQ(error.code, "model_not_found");
  EXPECT_TRUE(absl::StrContains(error.message, "`gpt-4`")) << error.message;
}

TEST_F(OpenAiRequestTest, ChatRendersTheTemplateAndAddsItsStop) {
  const OpenAiRequest request =
      Chat({{"messages",
             {{{"role", "system"}, {"content", "Be brief."}},
              {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "Hello"}}}}}}},
            {"stop", "."},
            {"max_completion_tokens", 7},
            {"max_tokens", 99}});
  EXPECT_EQ(request.generation.prompt_ids, Encode("system: Be brief.\nuser: Hello\nassistant:"));
  EXPECT_EQ(request.generation.stopping.stop_sequences, (std::vector<std::string>{".", "\nuser:"}));
  EXPECT_EQ(request.generation.stopping.max_new_tokens, 7);  // max_completion_tokens first
  EXPECT_EQ(request.names.max_tokens, "max_completion_tokens");
  EXPECT_EQ(request.names.prompt, "messages");
  EXPECT_EQ(request.generation.stopping.stop_sequences.size(), 2u);
  // Chat's default length is the server's (0 = the engine's default), not completions' 16.
  EXPECT_EQ(Chat({{"messages", {{{"role", "user"}, {"content", "x"}}}}})
                .generation.stopping.max_new_tokens,
            0);
  EXPECT_EQ(
      Chat({{"messages", {{{"role", "user"}, {"content", "x"}}}}, {"add_generation_prompt", false}})
          .generation.prompt_ids,
      Encode("user: x\n"));
}

TEST_F(OpenAiRequestTest, ChatLogprobsAndRefusals) {
  const json messages = {{{"role", "user"}, {"content", "x"}}};
  const OpenAiRequest request =
      Chat({{"messages", messages}, {"logprobs", true}, {"top_logprobs", 2}});
  EXPECT_TRUE(request.generation.logprobs.enabled);
  EXPECT_EQ(request.generation.logprobs.top_n, 2);
  EXPECT_EQ(request.names.top_logprobs, "top_logprobs");
  EXPECT_EQ(ChatError({{"messages", messages}, {"top_logprobs", 2}}).param, "top_logprobs");
  EXPECT_EQ(ChatError({{"messages", json::array()}}).param, "messages");
  EXPECT_EQ(ChatError({{"messages", {{{"role", "tool"}, {"content", "x"}}}}}).param,
            "messages[0].role");
  EXPECT_EQ(ChatError({{"messages", {{{"role", "user"}, {"content", 5}}}}}).param,
            "messages[0].content");
  EXPECT_EQ(
      ChatError({{"messages", {{{"role", "user"}, {"content", "x"}, {"tool_calls", 1}}}}}).param,
      "messages[0].tool_calls");
  EXPECT_EQ(ChatError({{"messages", messages}, {"tools", {{{"type", "function"}}}}}).param,
            "tools");
  EXPECT_EQ(
      ChatError({{"messages", messages}, {"response_format", {{"type", "json_object"}}}}).param,
      "response_format");
  // Their "off" values are fine.
  Chat({{"messages", messages},
        {"tools", json::array()},
        {"tool_choice", "none"},
        {"response_format", {{"type", "text"}}}});
}

// The engine's own validation, fed by the parser, refuses out-of-range values; the error names
// the OpenAI parameter (the same rules gRPC requests get, renamed).
TEST_F(OpenAiRequestTest, EngineValidationErrorsNameTheOpenAiParameter) {
  const engine::RequestLimits limits{.vocab_size = tokenizer_->piece_count(),
                                     .max_positions = 1 << 20,
                                     .max_prompt_tokens = 100,
                                     .default_max_new_tokens = 16,
                                     .max_new_tokens_limit = 64,
                                     .max_stop_sequences = 4,
                                     .max_stop_sequence_bytes = 8,
                                     .max_top_logprobs = 5,
                                     .max_n = 4,
                                     .max_beam_width = 4,
                                     .has_tokenizer = true};
  struct Case {
    json body;
    Endpoint endpoint;
    std::string param;
    std::string message_start;
  };
  const json messages = {{{"role", "user"}, {"content", "x"}}};
  const std::vector<Case> cases = {
      {{{"prompt", "x"}, {"top_p", 1.5}}, Endpoint::kCompletions, "top_p", "top_p must be in"},
      {{{"prompt", "x"}, {"logit_bias", {{"3", 101}}}},
       Endpoint::kCompletions,
       "logit_bias",
       "logit_bias biases must be in [-100, 100], got 101 for token 3"},
      {{{"prompt", "x"}, {"logit_bias", {{"3", 1}, {"03", 1}}}},
       Endpoint::kCompletions,
       "logit_bias",
       "logit_bias lists token 3 twice"},
      {{{"prompt", "x"}, {"temperature", -1}},
       Endpoint::kCompletions,
       "temperature",
       "temperature must be >= 0"},
      {{{"prompt", "x"}, {"max_tokens", 65}},
       Endpoint::kCompletions,
       "max_tokens",
       "max_tokens must be in [1, 64], got 65"},
      {{{"messages", messages}, {"max_completion_tokens", 65}},
       Endpoint::kChat,
       "max_completion_tokens",
       "max_completion_tokens must be in [1, 64], got 65"},
      {{{"prompt", "x"}, {"stop", {"a", "much too long"}}},
       Endpoint::kCompletions,
       "stop[1]",
       "stop[1] must be at most 8 bytes"},
      {{{"prompt", "x"}, {"logprobs", 6}},
       Endpoint::kCompletions,
       "logprobs",
       "logprobs must be in [0, 5], got 6"},
      {{{"messages", messages}, {"logprobs", true}, {"top_logprobs", 6}},
       Endpoint::kChat,
       "top_logprobs",
       "top_logprobs must be in [0, 5], got 6"},
      {{{"prompt", {1, 100000}}},
       Endpoint::kCompletions,
       "prompt[1]",
       "prompt[1] must be a token id"},
      {{{"prompt", "x"}, {"min_tokens", 20}},
       Endpoint::kCompletions,
       "min_tokens",
       "min_tokens must be in [0"},
      {{{"prompt", "x"}, {"presence_penalty", 3}},
       Endpoint::kCompletions,
       "presence_penalty",
       "presence_penalty must be in [-2, 2]"},
      {{{"prompt", "x"}, {"n", 5}, {"best_of", 5}},
       Endpoint::kCompletions,
       "n",
       "n must be in [1, 4], got 5"},
      {{{"prompt", "x"}, {"n", 2}, {"best_of", 6}},
       Endpoint::kCompletions,
       "best_of",
       "best_of must be in [1, 4], got 6"},
      {{{"prompt", "x"}, {"use_beam_search", true}, {"best_of", 5}},
       Endpoint::kCompletions,
       "best_of",
       "best_of must be in [1, 4]"},
      {{{"prompt", "x"}, {"use_beam_search", true}, {"best_of", 3}, {"n", 4}},
       Endpoint::kCompletions,
       "n",
       "n must be in [1, best_of = 3], got 4"},
      {{{"prompt", "x"}, {"use_beam_search", true}, {"best_of", 3}, {"temperature", 0.5}},
       Endpoint::kCompletions,
       "temperature",
       "temperature must be 0 or unset with best_of = 3 (beam search is deterministic), got 0.5"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body.dump());
    absl::StatusOr<OpenAiRequest> parsed = c.endpoint == Endpoint::kChat
                                               ? ParseChatRequest(c.body, model_)
                                               : ParseCompletionRequest(c.body, model_);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    const absl::Status status = engine::ValidateGenerationRequest(parsed->generation, limits);
    ASSERT_FALSE(status.ok());
    const ApiError error = ToApiError(status, parsed->names);
    EXPECT_EQ(error.http_status, 400);
    EXPECT_EQ(error.param, c.param);
    EXPECT_EQ(error.message.rfind(c.message_start, 0), 0u) << error.message;
  }
}

}  // namespace
}  // namespace slotserve::server::http
