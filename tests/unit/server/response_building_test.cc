// Engine events -> proto messages, and engine errors -> gRPC statuses.
#include "server/grpc/response_building.h"

#include <gtest/gtest.h>

#include "server/grpc/status_mapping.h"

namespace slotserve::server {
namespace {

engine::TokenChunk Chunk(std::vector<int32_t> ids, std::string text, bool with_logprobs) {
  engine::TokenChunk chunk;
  chunk.ids = std::move(ids);
  chunk.text = std::move(text);
  if (with_logprobs) {
    for (int32_t id : chunk.ids) {
      chunk.logprobs.push_back({{id, -0.5f}, {{id, -0.5f}, {id + 1, -1.5f}}});
    }
  }
  return chunk;
}

TEST(ResponseBuildingTest, ChunksMergeInOrder) {
  v1::Tokens tokens;
  AppendChunk(Chunk({3, 4}, "ab", true), &tokens);
  AppendChunk(Chunk({5}, "", true), &tokens);           // ids whose text is held back
  AppendChunk(Chunk({}, "c\xc3\xa9", false), &tokens);  // the final flush: text, no ids
  EXPECT_EQ(std::vector<int32_t>(tokens.ids().begin(), tokens.ids().end()),
            (std::vector<int32_t>{3, 4, 5}));
  EXPECT_EQ(tokens.text(), "abc\xc3\xa9");
  ASSERT_EQ(tokens.logprobs_size(), 3);
  EXPECT_EQ(tokens.logprobs(2).id(), 5);
  EXPECT_FLOAT_EQ(tokens.logprobs(2).logprob(), -0.5f);
  ASSERT_EQ(tokens.logprobs(2).top_size(), 2);
  EXPECT_EQ(tokens.logprobs(2).top(1).id(), 6);
}

TEST(ResponseBuildingTest, FinishedCarriesCountsSeedTimingsAndReason) {
  engine::Finished finished;
  finished.reason = engine::FinishReason::kStopSequence;
  finished.prompt_tokens = 7;
  finished.generated_tokens = 11;
  finished.seed = 99;
  finished.timings.queue = absl::Milliseconds(1);
  finished.timings.prefill = absl::Milliseconds(2);
  finished.timings.first_token = absl::Milliseconds(4);
  finished.timings.total = absl::Milliseconds(9);
  v1::Finished proto;
  FillFinished(finished, "req-1", &proto);
  EXPECT_EQ(proto.finish_reason(), v1::FINISH_REASON_STOP_SEQUENCE);
  EXPECT_EQ(proto.prompt_tokens(), 7u);
  EXPECT_EQ(proto.generated_tokens(), 11u);
  EXPECT_EQ(proto.seed(), 99u);
  EXPECT_EQ(proto.request_id(), "req-1");
  EXPECT_DOUBLE_EQ(proto.timings().queue_seconds(), 0.001);
  EXPECT_DOUBLE_EQ(proto.timings().prefill_seconds(), 0.002);
  EXPECT_DOUBLE_EQ(proto.timings().first_token_seconds(), 0.004);
  EXPECT_DOUBLE_EQ(proto.timings().total_seconds(), 0.009);
}

TEST(ResponseBuildingTest, FinishedCarriesBeamHypothesesInOrder) {
  engine::Finished finished;
  finished.hypotheses.push_back({.ids = {4, 2},
                                 .text = "a b",
                                 .score = -0.25,
                                 .logprob_sum = -0.5,
                                 .reason = engine::FinishReason::kEos});
  finished.hypotheses.push_back({.ids = {4, 5, 6},
                                 .text = "a cd",
                                 .score = -0.5,
                                 .logprob_sum = -1.5,
                                 .reason = engine::FinishReason::kLength});
  v1::Finished proto;
  FillFinished(finished, "req-2", &proto);
  ASSERT_EQ(proto.hypotheses_size(), 2);
  EXPECT_EQ(
      std::vector<int32_t>(proto.hypotheses(0).ids().begin(), proto.hypotheses(0).ids().end()),
      (std::vector<int32_t>{4, 2}));
  EXPECT_EQ(proto.hypotheses(0).text(), "a b");
  EXPECT_DOUBLE_EQ(proto.hypotheses(0).score(), -0.25);
  EXPECT_DOUBLE_EQ(proto.hypotheses(0).logprob_sum(), -0.5);
  EXPECT_EQ(proto.hypotheses(0).finish_reason(), v1::FINISH_REASON_EOS);
  EXPECT_EQ(proto.hypotheses(1).text(), "a cd");
  EXPECT_EQ(proto.hypotheses(1).finish_reason(), v1::FINISH_REASON_LENGTH);
}

TEST(ResponseBuildingTest, EveryFinishReasonHasAProtoReason) {
  EXPECT_EQ(ToProtoFinishReason(engine::FinishReason::kLength), v1::FINISH_REASON_LENGTH);
  EXPECT_EQ(ToProtoFinishReason(engine::FinishReason::kEos), v1::FINISH_REASON_EOS);
  EXPECT_EQ(ToProtoFinishReason(engine::FinishReason::kStopToken), v1::FINISH_REASON_EOS);
  EXPECT_EQ(ToProtoFinishReason(engine::FinishReason::kStopSequence),
            v1::FINISH_REASON_STOP_SEQUENCE);
  EXPECT_EQ(ToProtoFinishReason(engine::FinishReason::kCancelled), v1::FINISH_REASON_CANCELLED);
}

TEST(StatusMappingTest, CodeAndMessageSurviveUnchanged) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  const std::pair<absl::Status, grpc::StatusCode> cases[] = {
      {absl::InvalidArgumentError("sampling.top_p must be in (0, 1], got 2"),
       grpc::StatusCode::INVALID_ARGUMENT},
      {absl::ResourceExhaustedError("queue full"), grpc::StatusCode::RESOURCE_EXHAUSTED},
      {absl::DeadlineExceededError("late"), grpc::StatusCode::DEADLINE_EXCEEDED},
      {absl::UnavailableError("draining"), grpc::StatusCode::UNAVAILABLE},
      {absl::CancelledError("gone"), grpc::StatusCode::CANCELLED},
      {absl::FailedPreconditionError("no tokenizer"), grpc::StatusCode::FAILED_PRECONDITION},
      {absl::InternalError("model failed"), grpc::StatusCode::INTERNAL},
  };
  for (const auto& [status, code] : cases) {
    const grpc::Status mapped = ToGrpcStatus(status);
    EXPECT_EQ(mapped.error_code(), code) << status;
    EXPECT_EQ(mapped.error_message(), status.message());
  }
}

}  // namespace
}  // namespace slotserve::server
