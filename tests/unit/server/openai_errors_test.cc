// Statuses become OpenAI's error JSON with the right HTTP status, and engine field names
// become the parameters the client sent.
#include "server/http/openai_errors.h"

#include <gtest/gtest.h>

namespace slotserve::server::http {
namespace {

TEST(OpenAiErrorsTest, StatusCodesMapToHttpStatuses) {
  EXPECT_EQ(ToApiError(absl::InvalidArgumentError("x")).http_status, 400);
  EXPECT_EQ(ToApiError(absl::FailedPreconditionError("x")).http_status, 400);
  EXPECT_EQ(ToApiError(absl::NotFoundError("x")).http_status, 404);
  const ApiError full = ToApiError(absl::ResourceExhaustedError("the request queue is full"));
  EXPECT_EQ(full.http_status, 429);
  EXPECT_EQ(full.type, "rate_limit_error");
  EXPECT_EQ(full.code, "queue_full");
  const ApiError draining = ToApiError(absl::UnavailableError("the server is draining"));
  EXPECT_EQ(draining.http_status, 503);
  EXPECT_EQ(draining.message, "the server is draining");
  EXPECT_EQ(ToApiError(absl::DeadlineExceededError("x")).http_status, 504);
  EXPECT_EQ(ToApiError(absl::InternalError("x")).http_status, 500);
  EXPECT_EQ(ToApiError(absl::DataLossError("x")).type, "server_error");
}

TEST(OpenAiErrorsTest, UnauthenticatedIsOpenAisInvalidApiKey) {
  const ApiError error = ToApiError(absl::UnauthenticatedError("the API key is not valid"));
  EXPECT_EQ(error.http_status, 401);
  EXPECT_EQ(error.type, "invalid_request_error");
  EXPECT_EQ(error.code, "invalid_api_key");
}

TEST(OpenAiErrorsTest, EngineFieldsAreRenamedOnlyAtTheStartOfTheMessage) {
  ApiError error = ToApiError(absl::InvalidArgumentError("sampling.top_p must be in (0, 1]"));
  EXPECT_EQ(error.param, "top_p");
  EXPECT_EQ(error.message, "top_p must be in (0, 1]");
  error = ToApiError(absl::InvalidArgumentError("stopping.stop_sequences[2] must not be empty"));
  EXPECT_EQ(error.param, "stop[2]");
  error = ToApiError(absl::InvalidArgumentError("prompt must hold at least one token, got none"),
                     ParamNames{"messages", "max_tokens", "top_logprobs"});
  EXPECT_EQ(error.param, "messages");
  EXPECT_EQ(error.message, "messages must hold at least one token, got none");
  // A field name that merely starts another word is not a field.
  error = ToApiError(absl::InvalidArgumentError("prompts are odd"));
  EXPECT_FALSE(error.param.has_value());
  EXPECT_EQ(error.message, "prompts are odd");
  error = ToApiError(absl::InvalidArgumentError(
      "stopping.max_new_tokens must be in [1, 4096] (0 = the default, 128), got 5000"));
  EXPECT_EQ(error.message, "max_tokens must be in [1, 4096], got 5000");
  // Beam search's fields take vLLM's names, also where a message quotes the width.
  error =
      ToApiError(absl::InvalidArgumentError("beam.n_best must be in [1, beam.width = 3], got 4"));
  EXPECT_EQ(error.param, "n");
  EXPECT_EQ(error.message, "n must be in [1, best_of = 3], got 4");
  error = ToApiError(
      absl::InvalidArgumentError("sampling.seed must be unset with beam.width = 2 (beam search "
                                 "is deterministic), got 9"));
  EXPECT_EQ(error.param, "seed");
  EXPECT_EQ(error.message,
            "seed must be unset with best_of = 2 (beam search is deterministic), got 9");
}

TEST(OpenAiErrorsTest, ParamErrorsCarryTheirParameterAndCode) {
  const ApiError error = ToApiError(ParamError("n", "unsupported_value", "n: only 1"));
  EXPECT_EQ(error.http_status, 400);
  EXPECT_EQ(error.param, "n");
  EXPECT_EQ(error.code, "unsupported_value");
  EXPECT_EQ(ErrorBody(error).dump(),
            R"({"error":{"message":"n: only 1","type":"invalid_request_error","param":"n",)"
            R"("code":"unsupported_value"}})");
  EXPECT_EQ(ErrorBody(ToApiError(absl::InternalError("boom"))).dump(),
            R"({"error":{"message":"boom","type":"server_error","param":null,"code":null}})");
}

}  // namespace
}  // namespace slotserve::server::http
