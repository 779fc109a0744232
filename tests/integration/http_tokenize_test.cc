// /tokenize and /detokenize on a real server. The independent checks: the gRPC Tokenize RPC
// (the same tokenizer through the other front end) gives the same ids and pieces; the count
// is what a completion reports as its prompt_tokens (messages: what chat reports); detokenize
// gives the text back. Bad requests are refused naming the parameter, and with API keys the
// routes need one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/http_client.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

using nlohmann::json;

constexpr char kText[] = "In the beginning God created the heaven and the earth.";

class HttpTokenizeTest : public ServerTest {
 protected:
  void SetUp() override { StartServer({"--max-prompt-tokens=300", "--http-listen=127.0.0.1:0"}); }
  int port() const { return server_->http_port(); }

  v1::TokenizeResponse TokenizeOverGrpc(const std::string& text, bool add_bos) {
    grpc::ClientContext context;
    v1::TokenizeRequest request;
    request.set_text(text);
    request.set_add_bos(add_bos);
    v1::TokenizeResponse response;
    EXPECT_TRUE(stub_->Tokenize(&context, request, &response).ok());
    return response;
  }
};

TEST_F(HttpTokenizeTest, IdsCountsAndPiecesAgreeWithGrpcAndGeneration) {
  ASSERT_GT(port(), 0) << server_->log();
  const HttpResult tokens = PostJson(port(), "/tokenize", {{"prompt", kText}});
  ASSERT_EQ(tokens.status, 200) << tokens.body;
  const v1::TokenizeResponse grpc = TokenizeOverGrpc(kText, /*add_bos=*/true);
  EXPECT_EQ(tokens.json["tokens"].get<std::vector<int32_t>>(),
            std::vector<int32_t>(grpc.ids().begin(), grpc.ids().end()));
  EXPECT_EQ(tokens.json["count"], grpc.ids_size());
  EXPECT_EQ(tokens.json["max_model_len"], 300);
  EXPECT_TRUE(tokens.json["token_strs"].is_null());
  const HttpResult completion =
      PostJson(port(), "/v1/completions", {{"prompt", kText}, {"max_tokens", 1}});
  ASSERT_EQ(completion.status, 200) << completion.body;
  EXPECT_EQ(tokens.json["count"], completion.json["usage"]["prompt_tokens"]);

  const HttpResult bare = PostJson(port(), "/tokenize",
                                   {{"prompt", kText},
                                    {"add_special_tokens", false},
                                    {"return_token_strs", true},
                                    {"model", "tiny-abc"}});
  ASSERT_EQ(bare.status, 200) << bare.body;
  const v1::TokenizeResponse without_bos = TokenizeOverGrpc(kText, /*add_bos=*/false);
  EXPECT_EQ(bare.json["tokens"].get<std::vector<int32_t>>(),
            std::vector<int32_t>(without_bos.ids().begin(), without_bos.ids().end()));
  EXPECT_EQ(bare.json["token_strs"].get<std::vector<std::string>>(),
            std::vector<std::string>(without_bos.pieces().begin(), without_bos.pieces().end()));

  const HttpResult text = PostJson(port(), "/detokenize", {{"tokens", bare.json["tokens"]}});
  ASSERT_EQ(text.status, 200) << text.body;
  EXPECT_EQ(text.json["prompt"], kText);

  // Messages: the ids chat prefills, as many as chat's usage counts.
  const json messages = {{{"role", "user"}, {"content", "Who made the light?"}}};
  const HttpResult chat_tokens = PostJson(port(), "/tokenize", {{"messages", messages}});
  ASSERT_EQ(chat_tokens.status, 200) << chat_tokens.body;
  const HttpResult chat =
      PostJson(port(), "/v1/chat/completions", {{"messages", messages}, {"max_tokens", 1}});
  ASSERT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(chat_tokens.json["count"], chat.json["usage"]["prompt_tokens"]);
  EXPECT_NE(chat_tokens.json["count"].get<int>(), 0);
}

TEST_F(HttpTokenizeTest, BadRequestsNameTheParameter) {
  ASSERT_GT(port(), 0) << server_->log();
  struct Bad {
    std::string path;
    json body;
    int status;
    std::string param;
  };
  const std::vector<Bad> cases = {
      {"/tokenize", json::object(), 400, "prompt"},
      {"/tokenize", {{"prompt", 5}}, 400, "prompt"},
      {"/tokenize", {{"prompt", "x"}, {"add_bos", true}}, 400, "add_bos"},
      {"/tokenize", {{"prompt", "x"}, {"model", "gpt-4"}}, 404, "model"},
      {"/tokenize", {{"messages", "hello"}}, 400, "messages"},
      {"/detokenize", {{"tokens", {1, 999999}}}, 400, "tokens[1]"},
      {"/detokenize", {{"tokens", "abc"}}, 400, "tokens"},
      {"/detokenize", json::object(), 400, "tokens"},
  };
  for (const Bad& bad : cases) {
    const HttpResult refused = PostJson(port(), bad.path, bad.body);
    EXPECT_EQ(refused.status, bad.status) << bad.path << " " << refused.body;
    EXPECT_EQ(refused.json["error"]["param"], bad.param) << bad.path << " " << refused.body;
  }
}

}  // namespace
}  // namespace slotserve::testing
