// The source rules (engine/source_validation.h) through ValidateGenerationRequest: each is
// refused with INVALID_ARGUMENT quoting what was sent, and the good cases pass (a seq2seq
// request may have an empty prompt; a decoder-only request is unaffected).
#include "engine/source_validation.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/request_validation.h"

namespace slotserve::engine {
namespace {

RequestLimits DecoderOnlyLimits() {
  RequestLimits limits;
  limits.vocab_size = 29;
  limits.max_positions = 16;
  limits.max_prompt_tokens = 64;
  limits.default_max_new_tokens = 8;
  limits.max_new_tokens_limit = 64;
  limits.max_n = 4;
  return limits;
}

RequestLimits Seq2seqLimits() {
  RequestLimits limits = DecoderOnlyLimits();
  limits.seq2seq = true;
  limits.max_source_tokens = 5;
  return limits;
}

GenerationRequest Translation(std::vector<int32_t> source, std::vector<int32_t> prompt = {}) {
  GenerationRequest request;
  request.source_ids = std::move(source);
  request.prompt_ids = std::move(prompt);
  return request;
}

void ExpectRefused(const GenerationRequest& request, const RequestLimits& limits,
                   const std::string& message) {
  const absl::Status status = ValidateGenerationRequest(request, limits);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(status.message(), message);
}

TEST(SourceValidationTest, Seq2seqRequestsWithAGoodSourcePass) {
  EXPECT_TRUE(ValidateGenerationRequest(Translation({3, 4, 2}), Seq2seqLimits()).ok());
  EXPECT_TRUE(ValidateGenerationRequest(Translation({0, 28, 5, 6, 7}, {9}), Seq2seqLimits()).ok());
  // The decoder feeds decoder_start_id first: a prefix of max_positions - 1 just fits.
  EXPECT_TRUE(
      ValidateGenerationRequest(Translation({3}, std::vector<int32_t>(15, 4)), Seq2seqLimits())
          .ok());
}

TEST(SourceValidationTest, DecoderOnlyRequestsAreUnaffected) {
  GenerationRequest plain;
  plain.prompt_ids = {1, 5};
  EXPECT_TRUE(ValidateGenerationRequest(plain, DecoderOnlyLimits()).ok());
  plain.prompt_ids.clear();
  ExpectRefused(plain, DecoderOnlyLimits(), "prompt must hold at least one token, got none");
}

TEST(SourceValidationTest, ASeq2seqModelNeedsASource) {
  ExpectRefused(Translation({}, {5}), Seq2seqLimits(),
                "source must hold at least one token: this encoder-decoder model translates a "
                "source (text or token_ids), got none");
}

TEST(SourceValidationTest, ADecoderOnlyModelRefusesASource) {
  ExpectRefused(Translation({3, 4, 2}, {5}), DecoderOnlyLimits(),
                "source is only for encoder-decoder models; this model is decoder-only, got a "
                "source of 3 tokens");
}

TEST(SourceValidationTest, ASourceLongerThanTheLimitIsRefusedQuotingBoth) {
  ExpectRefused(Translation({3, 3, 3, 3, 3, 3}), Seq2seqLimits(),
                "source must be at most 5 tokens, got 6");
}

TEST(SourceValidationTest, SourceIdsOutsideTheVocabularyAreRefused) {
  ExpectRefused(Translation({3, 29}), Seq2seqLimits(),
                "source_ids[1] must be a token id in [0, 29), got 29");
  ExpectRefused(Translation({-1}), Seq2seqLimits(),
                "source_ids[0] must be a token id in [0, 29), got -1");
}

TEST(SourceValidationTest, ATargetPrefixThatLeavesNoRoomForTheStartTokenIsRefused) {
  ExpectRefused(Translation({3}, std::vector<int32_t>(16, 4)), Seq2seqLimits(),
                "prompt (the target prefix) must be at most 15 tokens (the decoder's longest "
                "context less decoder_start_id), got 16");
}

TEST(SourceValidationTest, ASessionContinuationSendsNoSource) {
  GenerationRequest continuation = Translation({}, {7});
  continuation.session.handle = "sess-1";
  EXPECT_TRUE(ValidateGenerationRequest(continuation, Seq2seqLimits()).ok());
  continuation.source_ids = {3, 2};
  ExpectRefused(continuation, Seq2seqLimits(),
                "source must not be set when continuing session sess-1: its state already holds "
                "its source; got a source of 2 tokens");
}

}  // namespace
}  // namespace slotserve::engine
