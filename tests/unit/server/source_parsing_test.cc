// GenerateRequest.source at the edge (server/grpc/source_parsing.h, and the prompt beside it in
// ParseGenerateRequest): ids pass through as given, a prompt beside a source is an optional
// target prefix, and a malformed source is refused naming its field (by the parser, or by the
// engine's check renamed to the proto field).
#include "server/grpc/source_parsing.h"

#include <gtest/gtest.h>

#include "server/grpc/request_parsing.h"
#include "tests/unit/server/grpc_refusal.h"

namespace slotserve::server {
namespace {

constexpr int kSourceBos = 1;
constexpr int kEos = 2;
constexpr int kSourceVocab = 100;

absl::StatusOr<engine::GenerationRequest> ParseSourceRequest(const v1::GenerateRequest& request) {
  absl::StatusOr<engine::GenerationRequest> parsed =
      ParseGenerateRequest(request, /*tokenizer=*/nullptr, kSourceBos, absl::InfiniteFuture());
  if (!parsed.ok()) return parsed;
  if (absl::Status source = ParseSource(request, nullptr, kEos, &*parsed); !source.ok()) {
    return source;
  }
  return parsed;
}

v1::GenerateRequest WithSourceIds(std::initializer_list<int32_t> ids) {
  v1::GenerateRequest request;
  request.mutable_source()->mutable_token_ids();
  for (int32_t id : ids) request.mutable_source()->mutable_token_ids()->add_ids(id);
  return request;
}

TEST(SourceParsingTest, SourceIdsPassThroughAsGivenAndThePromptMayBeAbsent) {
  absl::StatusOr<engine::GenerationRequest> parsed = ParseSourceRequest(WithSourceIds({5, 7, 99}));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->source_ids, (std::vector<int32_t>{5, 7, 99}));  // no eos added to ids
  EXPECT_TRUE(parsed->prompt_ids.empty());
}

// The engine checks the ids (source_validation.h); the refusal names the field the client set.
absl::Status SourceRefusal(const v1::GenerateRequest& request) {
  return testing::GrpcRefusal(request, kSourceBos, kEos,
                              testing::SmallModelLimits(kSourceVocab, /*seq2seq=*/true));
}

TEST(SourceParsingTest, AnIdOutsideTheVocabularyIsRefusedNamingTheProtoField) {
  const absl::Status refused = SourceRefusal(WithSourceIds({5, kSourceVocab}));
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.message(), "source.token_ids.ids[1] must be a token id in [0, 100), got 100");
  EXPECT_EQ(SourceRefusal(WithSourceIds({-1})).message(),
            "source.token_ids.ids[0] must be a token id in [0, 100), got -1");
  EXPECT_TRUE(SourceRefusal(WithSourceIds({5, 99})).ok());
}

TEST(SourceParsingTest, AnEmptyTextPromptBesideASourceIsNoPrefix) {
  v1::GenerateRequest request = WithSourceIds({5});
  request.set_text("");
  absl::StatusOr<engine::GenerationRequest> parsed = ParseSourceRequest(request);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->prompt_ids.empty());
}

TEST(SourceParsingTest, TokenIdPromptBesideASourceIsTheTargetPrefix) {
  v1::GenerateRequest request = WithSourceIds({5});
  request.mutable_token_ids()->add_ids(9);
  absl::StatusOr<engine::GenerationRequest> parsed = ParseSourceRequest(request);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->prompt_ids, (std::vector<int32_t>{9}));
}

TEST(SourceParsingTest, WithoutASourceThePromptIsStillRequired) {
  const absl::StatusOr<engine::GenerationRequest> parsed =
      ParseSourceRequest(v1::GenerateRequest());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ParseSourceRequest(WithSourceIds({3})).ok());
}

TEST(SourceParsingTest, MalformedSourcesAreRefusedNamingTheField) {
  const absl::StatusOr<engine::GenerationRequest> empty_ids = ParseSourceRequest(WithSourceIds({}));
  EXPECT_EQ(empty_ids.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(empty_ids.status().message(), "source.token_ids.ids must not be empty");

  v1::GenerateRequest neither;
  neither.mutable_source();
  EXPECT_EQ(ParseSourceRequest(neither).status().message(),
            "source must hold either text or token_ids when set, got neither");

  v1::GenerateRequest empty_text;
  empty_text.mutable_source()->set_text("");
  EXPECT_EQ(ParseSourceRequest(empty_text).status().message(), "source.text must not be empty");

  v1::GenerateRequest bad_utf8;
  bad_utf8.mutable_source()->set_text("\xff");
  EXPECT_EQ(ParseSourceRequest(bad_utf8).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(ParseSourceRequest(bad_utf8).status().message().find("source.text"), std::string::npos);

  v1::GenerateRequest no_tokenizer;
  no_tokenizer.mutable_source()->set_text("hello");
  EXPECT_EQ(ParseSourceRequest(no_tokenizer).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace slotserve::server
