// slotserve-cli's encoder-decoder flags (clients/cli/source_flags.h) into a GenerateRequest:
// --source text, --source-ids ids; both at once or a non-integer id are usage errors naming the
// flag; without them the request has no source.
#include "clients/cli/source_flags.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"

ABSL_DECLARE_FLAG(std::optional<std::string>, source);
ABSL_DECLARE_FLAG(std::vector<std::string>, source_ids);

namespace slotserve::clients {
namespace {

class SourceFlagsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    absl::SetFlag(&FLAGS_source, std::nullopt);
    absl::SetFlag(&FLAGS_source_ids, {});
  }
};

TEST_F(SourceFlagsTest, WithoutTheFlagsTheRequestHasNoSource) {
  v1::GenerateRequest request;
  ASSERT_TRUE(AddSource(&request).ok());
  EXPECT_FALSE(SourceGiven());
  EXPECT_FALSE(request.has_source());
}

TEST_F(SourceFlagsTest, TextOrIdsAreSet) {
  absl::SetFlag(&FLAGS_source, std::string("Hola"));
  v1::GenerateRequest request;
  ASSERT_TRUE(AddSource(&request).ok());
  EXPECT_TRUE(SourceGiven());
  EXPECT_EQ(request.source().text(), "Hola");

  absl::SetFlag(&FLAGS_source, std::nullopt);
  absl::SetFlag(&FLAGS_source_ids, std::vector<std::string>{"5", "17", "2"});
  v1::GenerateRequest by_ids;
  ASSERT_TRUE(AddSource(&by_ids).ok());
  EXPECT_EQ(std::vector<int32_t>(by_ids.source().token_ids().ids().begin(),
                                 by_ids.source().token_ids().ids().end()),
            (std::vector<int32_t>{5, 17, 2}));
}

TEST_F(SourceFlagsTest, BadCombinationsAreRefusedNamingTheFlag) {
  absl::SetFlag(&FLAGS_source, std::string("Hola"));
  absl::SetFlag(&FLAGS_source_ids, std::vector<std::string>{"5"});
  v1::GenerateRequest request;
  EXPECT_EQ(AddSource(&request).message(), "give either --source or --source-ids, not both");
  absl::SetFlag(&FLAGS_source, std::nullopt);
  absl::SetFlag(&FLAGS_source_ids, std::vector<std::string>{"5", "x7"});
  EXPECT_EQ(AddSource(&request).message(), "--source-ids: \"x7\" is not an integer token id");
}

}  // namespace
}  // namespace slotserve::clients
