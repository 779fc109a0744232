// slotserve-cli's --logit-bias (clients/cli/request_flags.h): comma-separated id:bias pairs
// become the request's SamplingParams.logit_bias map; a pair that is not an integer id and a
// number is a usage error quoting it.
#include "clients/cli/request_flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"

ABSL_DECLARE_FLAG(std::vector<std::string>, logit_bias);

namespace slotserve::clients {
namespace {

class LogitBiasFlagTest : public ::testing::Test {
 protected:
  void TearDown() override { absl::SetFlag(&FLAGS_logit_bias, {}); }
};

TEST_F(LogitBiasFlagTest, PairsBecomeTheRequestsMap) {
  absl::SetFlag(&FLAGS_logit_bias, std::vector<std::string>{"42:100", "7:-100", "9:0.5"});
  const absl::StatusOr<v1::GenerateRequest> request = BuildGenerateRequest("x");
  ASSERT_TRUE(request.ok()) << request.status();
  const auto& bias = request->sampling().logit_bias();
  ASSERT_EQ(bias.size(), 3u);
  EXPECT_FLOAT_EQ(bias.at(42), 100.0f);
  EXPECT_FLOAT_EQ(bias.at(7), -100.0f);
  EXPECT_FLOAT_EQ(bias.at(9), 0.5f);
}

TEST_F(LogitBiasFlagTest, WithoutTheFlagThereIsNoBias) {
  const absl::StatusOr<v1::GenerateRequest> request = BuildGenerateRequest("x");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_TRUE(request->sampling().logit_bias().empty());
}

TEST_F(LogitBiasFlagTest, APairThatIsNotIdAndBiasIsQuoted) {
  for (const std::string bad : {"42", "x:1", "42:strong", ":1"}) {
    absl::SetFlag(&FLAGS_logit_bias, std::vector<std::string>{"3:1", bad});
    const absl::StatusOr<v1::GenerateRequest> request = BuildGenerateRequest("x");
    ASSERT_FALSE(request.ok()) << bad;
    EXPECT_EQ(request.status().message(),
              "--logit-bias: \"" + bad + "\" is not a token id and a bias (id:bias)");
  }
}

}  // namespace
}  // namespace slotserve::clients
