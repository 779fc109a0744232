// generation_config.json's sampling defaults at both edges: the HTTP parser fills the
// parameters a body leaves out (null counts as left out) and leaves beam search alone; the gRPC
// side reads which fields a SamplingParams set.
#include <gtest/gtest.h>

#include "server/http/openai_request.h"
#include "server/grpc/request_parsing.h"

namespace slotserve::server {
namespace {

using nlohmann::json;

engine::SamplingDefaults GenerationConfigDefaults() {
  return {.temperature = 0.25f,
          .top_k = 40,
          .top_p = 0.5f,
          .min_p = 0.125f,
          .repetition_penalty = 1.5f};
}

absl::StatusOr<http::OpenAiRequest> ParseWithGenerationDefaults(const json& body) {
  http::ServedModel model{.name = "hf"};
  model.sampling_defaults = GenerationConfigDefaults();
  return http::ParseCompletionRequest(body, model);
}

TEST(SamplingDefaultsParsingTest, HttpFillsWhatTheBodyLeavesOut) {
  absl::StatusOr<http::OpenAiRequest> parsed = ParseWithGenerationDefaults(
      {{"prompt", {1, 2}}, {"temperature", 0.75}, {"top_k", -1}, {"top_p", nullptr}});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const engine::SamplingOptions& sampling = parsed->generation.sampling;
  EXPECT_EQ(sampling.temperature, 0.75f);  // the body's
  EXPECT_EQ(sampling.top_k, 0);            // the body's -1: off
  EXPECT_EQ(sampling.top_p, 0.5f);         // null: the default
  EXPECT_EQ(sampling.min_p, 0.125f);
  EXPECT_EQ(sampling.repetition_penalty, 1.5f);
}

TEST(SamplingDefaultsParsingTest, HttpLeavesBeamSearchGreedy) {
  absl::StatusOr<http::OpenAiRequest> parsed =
      ParseWithGenerationDefaults({{"prompt", {1, 2}}, {"use_beam_search", true}, {"best_of", 2}});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const engine::SamplingOptions& sampling = parsed->generation.sampling;
  EXPECT_EQ(sampling.temperature, 0.0f);
  EXPECT_EQ(sampling.top_k, 0);
  EXPECT_EQ(sampling.top_p, 1.0f);
  EXPECT_EQ(sampling.repetition_penalty, 1.0f);
}

TEST(SamplingDefaultsParsingTest, GrpcSetFieldsArePresenceOrNonZero) {
  v1::SamplingParams proto;
  engine::SampledFieldsSet set = SampledFieldsOf(proto);
  EXPECT_FALSE(set.temperature || set.top_k || set.top_p || set.min_p || set.repetition_penalty);
  proto.set_temperature(0.0f);  // set, even to the value an unset field has
  proto.set_top_k(3);
  proto.set_repetition_penalty(1.0f);
  set = SampledFieldsOf(proto);
  EXPECT_TRUE(set.temperature);
  EXPECT_TRUE(set.top_k);
  EXPECT_FALSE(set.top_p);
  EXPECT_FALSE(set.min_p);
  EXPECT_TRUE(set.repetition_penalty);
}

}  // namespace
}  // namespace slotserve::server
