// --served-model-name on a real server: the one name every front end reports and accepts.
// The independent check is the directory's name: the fixture's model lives in tiny-abc/, so a
// request naming "tiny-abc" must now be refused, and every place that showed "tiny-abc" must
// show the served name instead.
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "tests/integration/http_client.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

constexpr char kServedName[] = "org/kjv-abc-v2";

class ServedModelNameTest : public ServerTest {
 protected:
  void SetUp() override {
    StartServer({std::string("--served-model-name=") + kServedName, "--http-listen=127.0.0.1:0"});
  }
  int port() const { return server_->http_port(); }
};

TEST_F(ServedModelNameTest, EveryFrontEndReportsTheServedName) {
  ASSERT_GT(port(), 0) << server_->log();
  const HttpResult models = HttpRequest(port(), "/v1/models");
  ASSERT_EQ(models.status, 200) << models.body;
  ASSERT_EQ(models.json["data"].size(), 1u) << models.body;
  EXPECT_EQ(models.json["data"][0]["id"], kServedName);
  EXPECT_EQ(HttpRequest(port(), std::string("/v1/models/") + kServedName).json["id"], kServedName);
  EXPECT_EQ(HttpRequest(port(), "/v1/models/tiny-abc").status, 404);
  EXPECT_EQ(GetModelInfo(*stub_).model(), kServedName);
  EXPECT_TRUE(absl::StrContains(Scrape(), std::string("model=\"") + kServedName + "\""))
      << Scrape();
  EXPECT_TRUE(absl::StrContains(server_->log(), std::string("model ") + kServedName + " ("))
      << server_->log();
}

TEST_F(ServedModelNameTest, RequestsMustNameTheServedNameNotTheDirectory) {
  const HttpResult named = PostJson(port(), "/v1/completions",
                                    {{"model", kServedName}, {"prompt", "x"}, {"max_tokens", 2}});
  ASSERT_EQ(named.status, 200) << named.body;
  EXPECT_EQ(named.json["model"], kServedName);
  const HttpResult chat = PostJson(port(), "/v1/chat/completions",
                                   {{"model", kServedName},
                                    {"messages", {{{"role", "user"}, {"content", "x"}}}},
                                    {"max_tokens", 2}});
  ASSERT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(chat.json["model"], kServedName);

  const HttpResult directory = PostJson(
      port(), "/v1/completions", {{"model", "tiny-abc"}, {"prompt", "x"}, {"max_tokens", 2}});
  EXPECT_EQ(directory.status, 404) << directory.body;
  EXPECT_EQ(directory.json["error"]["code"], "model_not_found") << directory.body;
  EXPECT_TRUE(absl::StrContains(directory.json["error"]["message"].get<std::string>(), kServedName))
      << directory.body;
}

}  // namespace
}  // namespace slotserve::testing
