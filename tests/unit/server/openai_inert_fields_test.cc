// OpenAI fields with no effect here: accepted (also as null) where ignoring them cannot change
// the answer, refused naming the field where the client asked for something it would not get.
#include "server/http/openai_inert_fields.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "server/http/openai_errors.h"

namespace slotserve::server::http {
namespace {

using nlohmann::json;

// The status a body gets from ReadInertFields followed by the unknown-member check, the way a
// request parser runs them.
absl::Status Read(const json& body) {
  JsonParams params(body);
  if (absl::Status status = ReadInertFields(params); !status.ok()) return status;
  return params.CheckAllKnown();
}

TEST(OpenAiInertFieldsTest, HarmlessFieldsAreAcceptedWithValuesAndAsNull) {
  const json sent = {{"store", true},
                     {"metadata", {{"team", "docs"}}},
                     {"service_tier", "auto"},
                     {"user", "user-1234"},
                     {"prompt_cache_key", "chapter-1"},
                     {"safety_identifier", "hash-of-user"},
                     {"verbosity", "low"},
                     {"reasoning_effort", "minimal"},
                     {"prediction", {{"type", "content"}, {"content", "In the"}}},
                     {"modalities", {"text"}},
                     {"functions", json::array()},
                     {"function_call", "none"}};
  EXPECT_TRUE(Read(sent).ok()) << Read(sent);
  json nulls = json::object();
  for (const char* name :
       {"store", "metadata", "service_tier", "user", "prompt_cache_key", "safety_identifier",
        "verbosity", "reasoning_effort", "modalities", "prediction", "audio", "web_search_options",
        "functions", "function_call"}) {
    nulls[name] = nullptr;
  }
  EXPECT_TRUE(Read(nulls).ok()) << Read(nulls);
}

TEST(OpenAiInertFieldsTest, WhatWouldChangeTheAnswerIsRefusedNamingTheField) {
  struct Case {
    json body;
    const char* param;
    const char* says;
  };
  for (const Case& refused : {
           Case{{{"audio", {{"voice", "alloy"}, {"format", "wav"}}}}, "audio", "text only"},
           Case{{{"modalities", {"text", "audio"}}}, "modalities", "not audio"},
           Case{{{"web_search_options", json::object()}}, "web_search_options", "web search"},
           Case{{{"functions", {{{"name", "get_weather"}}}}}, "functions", "function calls"},
           Case{{{"function_call", "auto"}}, "function_call", "\"auto\""},
       }) {
    const absl::Status status = Read(refused.body);
    ASSERT_FALSE(status.ok()) << refused.body.dump();
    const ApiError error = ToApiError(status);
    EXPECT_EQ(error.http_status, 400);
    EXPECT_EQ(error.param, refused.param);
    EXPECT_EQ(error.code, "unsupported_value");
    EXPECT_TRUE(absl::StrContains(error.message, refused.says)) << error.message;
  }
}

TEST(OpenAiInertFieldsTest, AcceptedFieldsStillHaveTheirTypesChecked) {
  ApiError error = ToApiError(Read({{"store", "yes"}}));
  EXPECT_EQ(error.param, "store");
  EXPECT_EQ(error.code, "invalid_type");
  EXPECT_EQ(ToApiError(Read({{"metadata", "x"}})).param, "metadata");
  EXPECT_EQ(ToApiError(Read({{"user", 7}})).param, "user");
  // Misspellings stay unknown parameters.
  EXPECT_EQ(ToApiError(Read({{"stor", true}})).code, "unknown_parameter");
}

}  // namespace
}  // namespace slotserve::server::http
