// The wire -> engine edge: what the proto shape decides is checked here, with the proto
// field named; everything else passes through unchanged for the engine to judge, and the
// engine's refusal names the proto field too (proto_field_names.h).
#include "server/grpc/request_parsing.h"

#include <gtest/gtest.h>

#include "tests/unit/server/grpc_refusal.h"

namespace slotserve::server {
namespace {

constexpr int kBos = 1;
constexpr int kVocab = 100;

absl::StatusOr<engine::GenerationRequest> Parse(const v1::GenerateRequest& request) {
  return ParseGenerateRequest(request, /*tokenizer=*/nullptr, kBos, absl::InfiniteFuture());
}

// Parsed, then checked by the engine (which checks ids and stop sequences, once).
absl::Status Refusal(const v1::GenerateRequest& request) {
  return testing::GrpcRefusal(request, kBos, /*eos_id=*/2,
                              testing::SmallModelLimits(kVocab, /*seq2seq=*/false));
}

v1::GenerateRequest WithTokenIds(std::initializer_list<int32_t> ids) {
  v1::GenerateRequest request;
  request.mutable_token_ids();  // selects the oneof even when `ids` is empty
  for (int32_t id : ids) request.mutable_token_ids()->add_ids(id);
  return request;
}

void ExpectInvalid(const absl::Status& status, const std::string& field) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find(field), std::string::npos) << status;
}

TEST(RequestParsingTest, TokenIdsPassThroughUnchangedWithoutBos) {
  absl::StatusOr<engine::GenerationRequest> parsed = Parse(WithTokenIds({5, 7, 99}));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->prompt_ids, (std::vector<int32_t>{5, 7, 99}));
}

TEST(RequestParsingTest, UnsetOptionsKeepTheEngineDefaults) {
  absl::StatusOr<engine::GenerationRequest> parsed = Parse(WithTokenIds({5}));
  ASSERT_TRUE(parsed.ok());
  const engine::GenerationRequest defaults;
  EXPECT_EQ(parsed->sampling.temperature, defaults.sampling.temperature);
  EXPECT_EQ(parsed->sampling.top_p, defaults.sampling.top_p);
  EXPECT_EQ(parsed->sampling.repetition_penalty, defaults.sampling.repetition_penalty);
  EXPECT_FALSE(parsed->sampling.seed.has_value());
  EXPECT_EQ(parsed->stopping.max_new_tokens, 0);  // the scheduler's default
  EXPECT_FALSE(parsed->logprobs.enabled);
  EXPECT_EQ(parsed->deadline, absl::InfiniteFuture());
}

TEST(RequestParsingTest, EveryOptionIsCarriedOver) {
  v1::GenerateRequest request = WithTokenIds({5});
  request.set_request_id("abc");
  v1::SamplingParams& s = *request.mutable_sampling();
  s.set_temperature(0.0f);
  s.set_top_k(40);
  s.set_top_p(0.9f);
  s.set_min_p(0.05f);
  s.set_repetition_penalty(1.2f);
  s.set_presence_penalty(0.5f);
  s.set_frequency_penalty(-0.5f);
  s.set_seed(77);
  v1::StoppingParams& t = *request.mutable_stopping();
  t.set_max_new_tokens(12);
  t.set_min_new_tokens(3);
  t.add_stop_sequences("\n\n");
  t.add_stop_token_ids(2);
  t.set_ignore_eos(true);
  request.mutable_logprobs()->set_enabled(true);
  request.mutable_logprobs()->set_top_n(4);
  const absl::Time deadline = absl::FromUnixSeconds(2000000000);
  absl::StatusOr<engine::GenerationRequest> parsed =
      ParseGenerateRequest(request, nullptr, kBos, deadline);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->request_id, "abc");
  EXPECT_EQ(parsed->sampling.temperature, 0.0f);
  EXPECT_EQ(parsed->sampling.top_k, 40);
  EXPECT_FLOAT_EQ(parsed->sampling.top_p, 0.9f);
  EXPECT_FLOAT_EQ(parsed->sampling.min_p, 0.05f);
  EXPECT_FLOAT_EQ(parsed->sampling.repetition_penalty, 1.2f);
  EXPECT_FLOAT_EQ(parsed->sampling.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(parsed->sampling.frequency_penalty, -0.5f);
  EXPECT_EQ(parsed->sampling.seed, 77u);
  EXPECT_EQ(parsed->stopping.max_new_tokens, 12);
  EXPECT_EQ(parsed->stopping.min_new_tokens, 3);
  EXPECT_EQ(parsed->stopping.stop_sequences, std::vector<std::string>{"\n\n"});
  EXPECT_EQ(parsed->stopping.stop_token_ids, std::vector<int32_t>{2});
  EXPECT_TRUE(parsed->stopping.ignore_eos);
  EXPECT_TRUE(parsed->logprobs.enabled);
  EXPECT_EQ(parsed->logprobs.top_n, 4);
  EXPECT_EQ(parsed->deadline, deadline);
}

TEST(RequestParsingTest, HugeCountsReachTheEngineAsSent) {
  // Issue 15, defect 2: counts were clamped to INT32_MAX here, so the engine's refusal quoted
  // 2147483647 instead of what the client sent.
  v1::GenerateRequest request = WithTokenIds({5});
  request.mutable_stopping()->set_max_new_tokens(4294967295u);
  request.mutable_stopping()->set_min_new_tokens(4000000001u);
  request.mutable_logprobs()->set_top_n(4000000000u);
  absl::StatusOr<engine::GenerationRequest> parsed = Parse(request);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->stopping.max_new_tokens, int64_t{4294967295});
  EXPECT_EQ(parsed->stopping.min_new_tokens, int64_t{4000000001});
  EXPECT_EQ(parsed->logprobs.top_n, int64_t{4000000000});
}

TEST(RequestParsingTest, RefusalsNameTheProtoField) {
  ExpectInvalid(Parse(v1::GenerateRequest()).status(), "prompt must be set");
  ExpectInvalid(Parse(WithTokenIds({})).status(), "token_ids.ids must not be empty");
  ExpectInvalid(Refusal(WithTokenIds({5, 100})), "token_ids.ids[1]");
  ExpectInvalid(Refusal(WithTokenIds({-1})), "token_ids.ids[0]");
  v1::GenerateRequest empty_text;
  empty_text.set_text("");
  ExpectInvalid(Parse(empty_text).status(), "text must not be empty");
  v1::GenerateRequest empty_prompt_text;
  empty_prompt_text.set_prompt_text("");
  ExpectInvalid(Parse(empty_prompt_text).status(), "prompt_text must not be empty");
  v1::GenerateRequest bad_text;
  bad_text.set_text("ok \xc3\x28 not");
  ExpectInvalid(Parse(bad_text).status(), "text must be valid UTF-8");
  v1::GenerateRequest bad_stop = WithTokenIds({5});
  bad_stop.mutable_stopping()->add_stop_sequences("fine");
  bad_stop.mutable_stopping()->add_stop_sequences("\xed\xa0\x80");  // a surrogate
  ExpectInvalid(Refusal(bad_stop), "stopping.stop_sequences[1]");
  v1::GenerateRequest zero_max = WithTokenIds({5});
  zero_max.mutable_stopping()->set_max_new_tokens(0);
  ExpectInvalid(Parse(zero_max).status(), "stopping.max_new_tokens");
}

TEST(RequestParsingTest, TextNeedsATokenizer) {
  v1::GenerateRequest request;
  request.set_text("hello");
  EXPECT_EQ(Parse(request).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(RequestParsingTest, BeamOptionsAreCarriedOverAndUnsetTemperatureIsGreedy) {
  v1::GenerateRequest request = WithTokenIds({5});
  request.mutable_beam()->set_width(4);
  request.mutable_beam()->set_n_best(2);
  request.mutable_beam()->set_length_penalty(0.75f);
  absl::StatusOr<engine::GenerationRequest> parsed = Parse(request);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->beam.width, 4);
  EXPECT_EQ(parsed->beam.n_best, 2);
  EXPECT_EQ(parsed->beam.length_penalty, 0.75);
  EXPECT_EQ(parsed->sampling.temperature, 0.0f);  // a beam search is deterministic
  // A temperature the client set is passed on, for the engine to refuse quoting it.
  request.mutable_sampling()->set_temperature(0.7f);
  parsed = Parse(request);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->sampling.temperature, 0.7f);
}

TEST(RequestParsingTest, UnsetBeamIsNoBeamSearch) {
  absl::StatusOr<engine::GenerationRequest> parsed = Parse(WithTokenIds({5}));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->beam.width, 1);
  EXPECT_EQ(parsed->beam.n_best, 1);
  EXPECT_FALSE(parsed->beam.enabled());
  EXPECT_EQ(parsed->sampling.temperature, engine::GenerationRequest().sampling.temperature);
}

TEST(RequestParsingTest, AWidthOfOneIsGreedyUnlessATemperatureIsGiven) {
  v1::GenerateRequest request = WithTokenIds({5});
  request.mutable_beam()->set_width(1);
  absl::StatusOr<engine::GenerationRequest> parsed = Parse(request);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->beam.enabled());
  EXPECT_EQ(parsed->sampling.temperature, 0.0f);
  request.mutable_sampling()->set_temperature(0.7f);
  parsed = Parse(request);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->sampling.temperature, 0.7f);
}

}  // namespace
}  // namespace slotserve::server
