// Conventions of HTTP that real clients rely on (issue 57), against a real server: a known route
// asked with the wrong method is 405 with Allow, OPTIONS answers each route, CORS headers go
// exactly to the origins --allowed-origins names, OpenAI's no-effect fields are accepted (and the
// ones whose absence would change the answer refused), answers carry a system_fingerprint, and
// /v1/models has vLLM's max_model_len, root, parent and permission.
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "tests/integration/http_client.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

using nlohmann::json;

constexpr char kAppOrigin[] = "https://app.example.com";

class HttpConventionsTest : public ServerTest {
 protected:
  void StartHttp(std::vector<std::string> flags = {}) {
    flags.push_back("--http-listen=127.0.0.1:0");
    ASSERT_NO_FATAL_FAILURE(StartServer(flags));
    ASSERT_GT(server_->http_port(), 0) << server_->log();
  }
  HttpResult Send(const std::string& method, const std::string& path,
                  const std::multimap<std::string, std::string>& headers = {},
                  const std::string& body = "") {
    return SendHttp(server_->http_port(), method, path, headers, body);
  }
  static json Chat() {
    return {{"messages", {{{"role", "user"}, {"content", "Who made the light?"}}}},
            {"max_tokens", 3}};
  }
};

TEST_F(HttpConventionsTest, AKnownRouteAskedWithAnotherMethodIs405WithAllow) {
  ASSERT_NO_FATAL_FAILURE(StartHttp());
  struct Case {
    const char* method;
    const char* path;
    const char* allow;
  };
  for (const Case& wrong :
       {Case{"GET", "/v1/completions", "POST, OPTIONS"},
        Case{"GET", "/v1/chat/completions", "POST, OPTIONS"},
        Case{"DELETE", "/v1/models", "GET, HEAD, OPTIONS"},
        Case{"PUT", "/v1/models/tiny-abc", "GET, HEAD, OPTIONS"},
        Case{"GET", "/tokenize", "POST, OPTIONS"}, Case{"POST", "/health", "GET, HEAD, OPTIONS"},
        Case{"PATCH", "/metrics", "GET, HEAD, OPTIONS"}}) {
    SCOPED_TRACE(std::string(wrong.method) + " " + wrong.path);
    // A body on the wrong method too: it must be read, not left for the next request.
    const HttpResult answer =
        Send(wrong.method, wrong.path, {}, wrong.method[0] == 'G' ? "" : "{}");
    EXPECT_EQ(answer.status, 405) << answer.body;
    EXPECT_EQ(answer.Header("Allow"), wrong.allow);
    ASSERT_TRUE(answer.json.is_object()) << answer.body;
    const std::string message = answer.json["error"]["message"];
    EXPECT_TRUE(absl::StrContains(message, wrong.path)) << message;
    EXPECT_TRUE(absl::StrContains(message, wrong.allow)) << message;
  }
  // An unknown path is still 404, and the routes still answer their own method.
  EXPECT_EQ(Send("GET", "/v1/nothing-here").status, 404);
  EXPECT_EQ(Send("GET", "/health").status, 200);
  EXPECT_EQ(PostJson(server_->http_port(), "/v1/chat/completions", Chat()).status, 200);
}

TEST_F(HttpConventionsTest, OptionsAnswersEachRouteAndNoCorsHeadersWithoutAllowedOrigins) {
  ASSERT_NO_FATAL_FAILURE(StartHttp());
  const HttpResult options = Send("OPTIONS", "/v1/chat/completions");
  EXPECT_EQ(options.status, 204) << options.body;
  EXPECT_EQ(options.Header("Allow"), "POST, OPTIONS");
  EXPECT_EQ(Send("OPTIONS", "/v1/models").Header("Allow"), "GET, HEAD, OPTIONS");
  EXPECT_EQ(Send("OPTIONS", "/v1/nothing-here").status, 404);
  // CORS is off by default: a page from another origin gets no Access-Control-* at all.
  const HttpResult preflight = Send("OPTIONS", "/v1/chat/completions",
                                    {{"Origin", kAppOrigin},
                                     {"Access-Control-Request-Method", "POST"},
                                     {"Access-Control-Request-Headers", "content-type"}});
  EXPECT_EQ(preflight.status, 204);
  for (const auto& [name, value] : preflight.headers) {
    EXPECT_FALSE(absl::StartsWithIgnoreCase(name, "Access-Control-")) << name << ": " << value;
  }
  const HttpResult post = SendHttp(server_->http_port(), "POST", "/v1/chat/completions",
                                   {{"Origin", kAppOrigin}}, Chat().dump());
  EXPECT_EQ(post.status, 200) << post.body;
  EXPECT_EQ(post.Header("Access-Control-Allow-Origin"), "");
}

TEST_F(HttpConventionsTest, CorsAnswersTheAllowedOriginOnlyWithItsPreflight) {
  ASSERT_NO_FATAL_FAILURE(
      StartHttp({std::string("--allowed-origins=http://localhost:3000, ") + kAppOrigin}));
  const HttpResult preflight =
      Send("OPTIONS", "/v1/chat/completions",
           {{"Origin", kAppOrigin},
            {"Access-Control-Request-Method", "POST"},
            {"Access-Control-Request-Headers", "authorization, content-type"}});
  EXPECT_EQ(preflight.status, 204) << preflight.body;
  EXPECT_EQ(preflight.Header("Access-Control-Allow-Origin"), kAppOrigin);
  EXPECT_EQ(preflight.Header("Vary"), "Origin");
  // --allowed-methods "*" (the default): the route's own methods.
  EXPECT_EQ(preflight.Header("Access-Control-Allow-Methods"), "POST, OPTIONS");
  // --allowed-headers "*": what the page asked for, Authorization included.
  EXPECT_EQ(preflight.Header("Access-Control-Allow-Headers"), "authorization, content-type");
  EXPECT_EQ(preflight.Header("Access-Control-Max-Age"), "600");

  // The request itself, and an error answer too (a browser hides the body of either without it).
  const HttpResult post = SendHttp(server_->http_port(), "POST", "/v1/chat/completions",
                                   {{"Origin", kAppOrigin}}, Chat().dump());
  EXPECT_EQ(post.status, 200) << post.body;
  EXPECT_EQ(post.Header("Access-Control-Allow-Origin"), kAppOrigin);
  EXPECT_EQ(post.Header("Access-Control-Expose-Headers"), "X-Request-Id, Retry-After");
  const HttpResult refused = SendHttp(server_->http_port(), "POST", "/v1/completions",
                                      {{"Origin", "http://localhost:3000"}}, R"({"prompt": ""})");
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(refused.Header("Access-Control-Allow-Origin"), "http://localhost:3000");
  // Another origin gets nothing.
  const HttpResult other = SendHttp(server_->http_port(), "POST", "/v1/chat/completions",
                                    {{"Origin", "https://evil.example"}}, Chat().dump());
  EXPECT_EQ(other.status, 200);
  EXPECT_EQ(other.Header("Access-Control-Allow-Origin"), "");
}

TEST_F(HttpConventionsTest, ExplicitAllowedMethodsAndHeadersAreWhatThePreflightIsTold) {
  ASSERT_NO_FATAL_FAILURE(StartHttp({"--allowed-origins=*", "--allowed-methods=post,get",
                                     "--allowed-headers=Authorization, Content-Type"}));
  const HttpResult preflight = Send("OPTIONS", "/v1/completions",
                                    {{"Origin", "https://anywhere.example"},
                                     {"Access-Control-Request-Method", "POST"},
                                     {"Access-Control-Request-Headers", "x-custom"}});
  EXPECT_EQ(preflight.Header("Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(preflight.Header("Access-Control-Allow-Methods"), "POST, GET");
  EXPECT_EQ(preflight.Header("Access-Control-Allow-Headers"), "Authorization, Content-Type");
}

TEST_F(HttpConventionsTest, OpenAiFieldsWithoutEffectAreAcceptedAndAudioIsRefused) {
  ASSERT_NO_FATAL_FAILURE(StartHttp());
  json body = Chat();
  body["temperature"] = 0;
  const HttpResult plain = PostJson(server_->http_port(), "/v1/chat/completions", body);
  ASSERT_EQ(plain.status, 200) << plain.body;
  // What the official SDKs and frameworks send: values, and nulls.
  json with_extras = body;
  with_extras.update({{"store", true},
                      {"metadata", {{"purpose", "test"}}},
                      {"user", "user-42"},
                      {"service_tier", nullptr},
                      {"prompt_cache_key", "light"},
                      {"safety_identifier", nullptr},
                      {"reasoning_effort", "low"},
                      {"verbosity", nullptr},
                      {"modalities", {"text"}},
                      {"audio", nullptr},
                      {"prediction", nullptr},
                      {"web_search_options", nullptr},
                      {"functions", nullptr},
                      {"function_call", nullptr}});
  const HttpResult extras = PostJson(server_->http_port(), "/v1/chat/completions", with_extras);
  ASSERT_EQ(extras.status, 200) << extras.body;
  // Without effect indeed: the same greedy answer.
  EXPECT_EQ(extras.json["choices"][0]["message"]["content"],
            plain.json["choices"][0]["message"]["content"]);
  json audio = body;
  audio["modalities"] = {"text", "audio"};
  const HttpResult refused = PostJson(server_->http_port(), "/v1/chat/completions", audio);
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(refused.json["error"]["param"], "modalities");
  EXPECT_TRUE(absl::StrContains(refused.json["error"]["message"].get<std::string>(), "audio"));
}

TEST_F(HttpConventionsTest, AnswersCarryOneSystemFingerprintAndModelsHasVllmsShape) {
  ASSERT_NO_FATAL_FAILURE(StartHttp({"--max-prompt-tokens=1000"}));
  const HttpResult chat = PostJson(server_->http_port(), "/v1/chat/completions", Chat());
  ASSERT_EQ(chat.status, 200) << chat.body;
  const std::string fingerprint = chat.json.value("system_fingerprint", "");
  EXPECT_TRUE(absl::StartsWith(fingerprint, "fp_")) << chat.body;
  EXPECT_EQ(fingerprint.size(), 15u) << fingerprint;
  const HttpResult completion = PostJson(server_->http_port(), "/v1/completions",
                                         {{"prompt", "In the beginning"}, {"max_tokens", 2}});
  EXPECT_EQ(completion.json.value("system_fingerprint", ""), fingerprint) << completion.body;
  const SseResult stream = PostStream(server_->http_port(), "/v1/completions",
                                      {{"prompt", "And"}, {"max_tokens", 3}, {"stream", true}});
  ASSERT_FALSE(stream.events.empty());
  for (const json& event : stream.events) EXPECT_EQ(event["system_fingerprint"], fingerprint);

  const HttpResult models = HttpRequest(server_->http_port(), "/v1/models");
  ASSERT_EQ(models.status, 200);
  const json& model = models.json["data"][0];
  EXPECT_EQ(model["max_model_len"], 1000) << model.dump();
  EXPECT_EQ(model["root"], "tiny-abc") << model.dump();  // the model directory's name
  EXPECT_TRUE(model["parent"].is_null());
  ASSERT_EQ(model["permission"].size(), 1u);
  EXPECT_EQ(model["permission"][0]["object"], "model_permission");
  EXPECT_EQ(model["permission"][0]["allow_sampling"], true);
  EXPECT_EQ(HttpRequest(server_->http_port(), "/v1/models/" + model["id"].get<std::string>()).json,
            model);
}

}  // namespace
}  // namespace slotserve::testing
