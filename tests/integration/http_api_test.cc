// The OpenAI-compatible HTTP API of a real server (--http-listen), beside gRPC on the same
// engine: the same greedy request gives the same tokens both ways, streams are well-formed
// server-sent events, and errors come in OpenAI's JSON naming the parameter.
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "tests/integration/http_client.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

using nlohmann::json;

class HttpApiTest : public ServerTest {
 protected:
  void SetUp() override { StartServer({"--max-slots=8", "--http-listen=127.0.0.1:0"}); }
  int port() const { return server_->http_port(); }

  // The greedy, fixed-length completion of `prompt` over gRPC.
  v1::CompleteResponse GrpcComplete(const v1::GenerateRequest& request) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    v1::CompleteResponse response;
    EXPECT_TRUE(stub_->Complete(&context, request, &response).ok());
    return response;
  }
};

std::vector<int32_t> Ids(const json& ids) { return ids.get<std::vector<int32_t>>(); }

TEST_F(HttpApiTest, TheSameGreedyRequestGivesTheSameTokensOverHttpAndGrpc) {
  ASSERT_GT(port(), 0) << server_->log();
  for (const std::string prompt : {"In the beginning God created", "And God said", "x"}) {
    SCOPED_TRACE(prompt);
    const v1::CompleteResponse grpc = GrpcComplete(GreedyTextRequest(prompt, 24));
    const std::vector<int32_t> grpc_ids(grpc.token_ids().begin(), grpc.token_ids().end());
    const json request = {{"prompt", prompt},
                          {"max_tokens", 24},
                          {"temperature", 0},
                          {"ignore_eos", true},
                          {"return_token_ids", true}};
    const HttpResult whole = PostJson(port(), "/v1/completions", request);
    ASSERT_EQ(whole.status, 200) << whole.body;
    const json& choice = whole.json["choices"][0];
    EXPECT_EQ(Ids(choice["token_ids"]), grpc_ids);
    EXPECT_EQ(choice["text"], grpc.text());
    EXPECT_EQ(choice["finish_reason"], "length");
    EXPECT_EQ(whole.json["usage"]["completion_tokens"], 24);
    EXPECT_EQ(whole.json["usage"]["prompt_tokens"], grpc.finished().prompt_tokens());

    json streamed_request = request;
    streamed_request["stream"] = true;
    const SseResult stream = PostStream(port(), "/v1/completions", streamed_request);
    ASSERT_EQ(stream.status, 200) << stream.raw;
    EXPECT_EQ(stream.token_ids, grpc_ids);
    EXPECT_EQ(stream.text, grpc.text());
  }
  // A token-id prompt is used as given, as gRPC's token_ids.
  v1::GenerateRequest by_ids = GreedyTextRequest("", 16);
  for (int id : {1, 17, 42}) by_ids.mutable_token_ids()->add_ids(id);
  const HttpResult ids = PostJson(
      port(), "/v1/completions",
      {{"prompt", {1, 17, 42}}, {"max_tokens", 16}, {"temperature", 0}, {"ignore_eos", true}});
  ASSERT_EQ(ids.status, 200) << ids.body;
  EXPECT_EQ(ids.json["choices"][0]["text"], GrpcComplete(by_ids).text());
}

TEST_F(HttpApiTest, ChatAppliesTheDefaultTemplateAsAPlainPromptWould) {
  const HttpResult chat =
      PostJson(port(), "/v1/chat/completions",
               {{"messages", {{{"role", "user"}, {"content", "Who made the light?"}}}},
                {"max_tokens", 20},
                {"temperature", 0},
                {"return_token_ids", true}});
  ASSERT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(chat.json["object"], "chat.completion");
  EXPECT_EQ(chat.json["choices"][0]["message"]["role"], "assistant");
  // The same as gRPC given the rendered template and its stop sequence.
  v1::GenerateRequest request = GreedyTextRequest("user: Who made the light?\nassistant:", 20);
  request.mutable_stopping()->set_ignore_eos(false);
  request.mutable_stopping()->add_stop_sequences("\nuser:");
  const v1::CompleteResponse grpc = GrpcComplete(request);
  EXPECT_EQ(chat.json["choices"][0]["message"]["content"], grpc.text());
  EXPECT_EQ(Ids(chat.json["choices"][0]["token_ids"]),
            std::vector<int32_t>(grpc.token_ids().begin(), grpc.token_ids().end()));
}

TEST_F(HttpApiTest, StreamsAreServerSentEventsEndingWithUsageAndDone) {
  const SseResult stream = PostStream(port(), "/v1/chat/completions",
                                      {{"messages", {{{"role", "user"}, {"content", "Hi"}}}},
                                       {"max_tokens", 12},
                                       {"ignore_eos", true},
                                       {"seed", 7},
                                       {"stream", true},
                                       {"stream_options", {{"include_usage", true}}}});
  ASSERT_EQ(stream.status, 200) << stream.raw;
  EXPECT_EQ(stream.content_type.rfind("text/event-stream", 0), 0u) << stream.content_type;
  EXPECT_TRUE(stream.well_formed) << stream.raw;
  EXPECT_TRUE(stream.done) << stream.raw;
  ASSERT_GE(stream.events.size(), 3u);
  EXPECT_EQ(stream.events.front()["choices"][0]["delta"]["role"], "assistant");
  const std::string id = stream.events.front()["id"];
  EXPECT_EQ(id.rfind("chatcmpl-", 0), 0u) << id;
  for (size_t i = 0; i + 1 < stream.events.size(); ++i) {
    EXPECT_EQ(stream.events[i]["object"], "chat.completion.chunk");
    EXPECT_EQ(stream.events[i]["id"], id);
    EXPECT_TRUE(stream.events[i]["usage"].is_null());
  }
  const json& last_choice = stream.events[stream.events.size() - 2]["choices"][0];
  EXPECT_EQ(last_choice["finish_reason"], "length");
  const json& usage = stream.events.back();
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 12);
  EXPECT_EQ(usage["usage"]["total_tokens"], usage["usage"]["prompt_tokens"].get<int>() + 12);

  // The same seed gives the same text, streamed or not.
  const HttpResult whole = PostJson(port(), "/v1/chat/completions",
                                    {{"messages", {{{"role", "user"}, {"content", "Hi"}}}},
                                     {"max_tokens", 12},
                                     {"ignore_eos", true},
                                     {"seed", 7}});
  ASSERT_EQ(whole.status, 200);
  EXPECT_EQ(whole.json["choices"][0]["message"]["content"], stream.text);
}

// n > 1 (docs/ARCHITECTURE.md "Request state" fork): one prefill, then choice i samples with seed +
// i, so each choice is the single-choice request with that seed; streamed chunks carry each
// choice's index.
TEST_F(HttpApiTest, SeveralChoicesEachEqualTheSingleRequestWithTheirSeed) {
  const json base = {{"prompt", "In the beginning"},
                     {"max_tokens", 12},
                     {"temperature", 1.0},
                     {"ignore_eos", true},
                     {"seed", 40}};
  json forked = base;
  forked["n"] = 3;
  const HttpResult whole = PostJson(port(), "/v1/completions", forked);
  ASSERT_EQ(whole.status, 200) << whole.body;
  ASSERT_EQ(whole.json["choices"].size(), 3u) << whole.body;
  std::vector<std::string> expected;
  int64_t prompt_tokens = 0;
  for (int i = 0; i < 3; ++i) {
    json single = base;
    single["seed"] = 40 + i;
    const HttpResult alone = PostJson(port(), "/v1/completions", single);
    ASSERT_EQ(alone.status, 200) << alone.body;
    expected.push_back(alone.json["choices"][0]["text"]);
    prompt_tokens = alone.json["usage"]["prompt_tokens"];
    EXPECT_EQ(whole.json["choices"][i]["index"], i);
    EXPECT_EQ(whole.json["choices"][i]["text"], expected.back()) << "choice " << i;
  }
  EXPECT_NE(expected[0], expected[1]);  // the seeds differ, so (almost surely) do the texts
  EXPECT_EQ(whole.json["usage"]["prompt_tokens"], prompt_tokens);  // prefilled once
  EXPECT_EQ(whole.json["usage"]["completion_tokens"], 36);

  json streamed = forked;
  streamed["stream"] = true;
  streamed["stream_options"] = {{"include_usage", true}};
  const SseResult stream = PostStream(port(), "/v1/completions", streamed);
  ASSERT_EQ(stream.status, 200) << stream.raw;
  ASSERT_TRUE(stream.done && stream.well_formed) << stream.raw;
  const StreamedChoices choices = SplitChoices(stream, 3);
  EXPECT_TRUE(choices.indexes_in_range) << stream.raw;
  EXPECT_EQ(choices.texts, expected);
  EXPECT_EQ(choices.finishes, std::vector<int>({1, 1, 1}));
  EXPECT_EQ(stream.events.back()["usage"]["completion_tokens"], 36);

  // Every choice's slot is back once the answers are in.
  EXPECT_TRUE(PoolIsFull());
}

TEST_F(HttpApiTest, LogprobsComeInOpenAisShapes) {
  const HttpResult completion = PostJson(
      port(), "/v1/completions",
      {{"prompt", "In the beginning"}, {"max_tokens", 5}, {"temperature", 0}, {"logprobs", 2}});
  ASSERT_EQ(completion.status, 200) << completion.body;
  const json& logprobs = completion.json["choices"][0]["logprobs"];
  ASSERT_EQ(logprobs["tokens"].size(), 5u);
  ASSERT_EQ(logprobs["token_logprobs"].size(), 5u);
  ASSERT_EQ(logprobs["top_logprobs"].size(), 5u);
  EXPECT_EQ(logprobs["text_offset"][0], 0);
  std::string joined;
  for (const json& token : logprobs["tokens"]) joined += token.get<std::string>();
  EXPECT_EQ(joined, completion.json["choices"][0]["text"]);
  // Greedy: the chosen token is the likeliest, so it is among the two alternatives.
  EXPECT_LE(logprobs["top_logprobs"][0].size(), 2u);
  EXPECT_TRUE(logprobs["top_logprobs"][0].contains(logprobs["tokens"][0].get<std::string>()));

  const HttpResult chat = PostJson(port(), "/v1/chat/completions",
                                   {{"messages", {{{"role", "user"}, {"content", "Hi"}}}},
                                    {"max_tokens", 4},
                                    {"temperature", 0},
                                    {"logprobs", true},
                                    {"top_logprobs", 3}});
  ASSERT_EQ(chat.status, 200) << chat.body;
  const json& content = chat.json["choices"][0]["logprobs"]["content"];
  ASSERT_FALSE(content.empty());
  EXPECT_EQ(content[0]["top_logprobs"].size(), 3u);
  EXPECT_EQ(content[0]["top_logprobs"][0]["token"], content[0]["token"]);
  EXPECT_LE(content[0]["logprob"].get<double>(), 0.0);
  EXPECT_TRUE(content[0]["bytes"].is_array());
}

TEST_F(HttpApiTest, BadRequestsGetOpenAiErrorsNamingTheParameter) {
  struct Case {
    std::string path;
    std::string body;
    int status;
    json param;
  };
  const std::vector<Case> cases = {
      {"/v1/completions", R"({"prompt": "x", "temperature": -1})", 400, "temperature"},
      {"/v1/completions", R"({"prompt": "x", "top_p": "high"})", 400, "top_p"},
      {"/v1/completions", R"({"prompt": "x", "n": 100})", 400, "n"},
      {"/v1/completions", R"({"prompt": "x", "n": 3, "best_of": 2})", 400, "best_of"},
      {"/v1/completions", R"({"prompt": "x", "max_tokens": 300000})", 400, "max_tokens"},
      {"/v1/completions", R"({"prompt": "x", "temprature": 0})", 400, "temprature"},
      {"/v1/completions", R"({"prompt": [1, 5000]})", 400, "prompt[1]"},
      {"/v1/completions", R"({"prompt": "x", "model": "gpt-4"})", 404, "model"},
      {"/v1/completions", R"({"prompt": "x", )", 400, nullptr},
      {"/v1/completions", "{\"prompt\": \"\xff\"}", 400, nullptr},
      {"/v1/chat/completions", R"({"messages": [{"role": "tool", "content": "x"}]})", 400,
       "messages[0].role"},
      {"/v1/chat/completions", R"({"messages": []})", 400, "messages"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    const HttpResult result = HttpRequest(port(), c.path, c.body);
    EXPECT_EQ(result.status, c.status) << result.body;
    ASSERT_TRUE(result.json.contains("error")) << result.body;
    const json& error = result.json["error"];
    EXPECT_EQ(error["param"], c.param);
    EXPECT_TRUE(error["message"].is_string());
    EXPECT_TRUE(error.contains("code"));
    EXPECT_EQ(error["type"], "invalid_request_error");
  }
  const HttpResult quoted =
      HttpRequest(port(), "/v1/completions", R"({"prompt": "x", "temperature": -1.5})");
  EXPECT_TRUE(absl::StrContains(quoted.json["error"]["message"].get<std::string>(), "got -1.5"))
      << quoted.body;
  const HttpResult no_route = HttpRequest(port(), "/v1/embeddings", R"({"input": "x"})");
  EXPECT_EQ(no_route.status, 404);
  EXPECT_TRUE(no_route.json["error"]["message"].is_string()) << no_route.body;
  // Refusals are counted like gRPC's.
  EXPECT_GE(
      MetricValue(Scrape(), "slotserve_requests_total{outcome=\"invalid_argument\"}").value_or(0),
      9.0);
}

TEST_F(HttpApiTest, ModelsHealthAndMetricsShareTheListener) {
  const HttpResult models = HttpRequest(port(), "/v1/models");
  ASSERT_EQ(models.status, 200);
  EXPECT_EQ(models.json["object"], "list");
  EXPECT_EQ(models.json["data"][0]["id"], "tiny-abc");
  EXPECT_EQ(HttpRequest(port(), "/v1/models/tiny-abc").json["id"], "tiny-abc");
  EXPECT_EQ(HttpRequest(port(), "/v1/models/other").status, 404);
  const HttpResult health = HttpRequest(port(), "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.json["status"], "serving");
  const HttpResult metrics = HttpRequest(port(), "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_TRUE(absl::StrContains(metrics.body, "slotserve_state_slots_total 8")) << metrics.body;
  // The dedicated metrics listener still serves the same registry.
  EXPECT_TRUE(absl::StrContains(Scrape(), "slotserve_state_slots_total 8"));
}

}  // namespace
}  // namespace slotserve::testing
