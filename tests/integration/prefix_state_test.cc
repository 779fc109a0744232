// docs/ARCHITECTURE.md "Request state" prefix states through a real server: the second request with
// a long shared prompt starts from a cached prefix state and streams bitwise the tokens and
// logprobs of the first, and the prefix-cache metrics count the hit and the tokens it saved.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

class PrefixStateTest : public ServerTest {};

v1::GenerateRequest LongGreedyRequest() {
  v1::GenerateRequest request;
  for (int t = 0; t < 70; ++t) request.mutable_token_ids()->add_ids(3 + (t * 13) % 90);
  request.mutable_sampling()->set_temperature(0.0f);
  request.mutable_stopping()->set_max_new_tokens(12);
  request.mutable_stopping()->set_ignore_eos(true);
  request.mutable_logprobs()->set_enabled(true);
  request.mutable_logprobs()->set_top_n(3);
  return request;
}

std::vector<std::string> LogprobsOf(const StreamResult& result) {
  std::vector<std::string> serialized;
  for (const v1::GenerateResponse& message : result.messages) {
    if (!message.has_tokens()) continue;
    for (const v1::TokenLogprob& logprob : message.tokens().logprobs()) {
      serialized.push_back(logprob.SerializeAsString());  // bitwise, floats included
    }
  }
  return serialized;
}

TEST_F(PrefixStateTest, ACachedPrefixGivesBitwiseTheSameStreamAndIsCounted) {
  StartServer({"--prefix-block=16", "--prefix-cache-memory=64MiB"});
  const StreamResult miss = Generate(*stub_, LongGreedyRequest());
  ASSERT_TRUE(miss.status.ok()) << miss.status.error_message();
  const StreamResult hit = Generate(*stub_, LongGreedyRequest());
  ASSERT_TRUE(hit.status.ok()) << hit.status.error_message();
  ASSERT_EQ(hit.ids.size(), 12u);
  EXPECT_EQ(hit.ids, miss.ids);
  EXPECT_EQ(LogprobsOf(hit), LogprobsOf(miss));

  const std::string scrape = Scrape();
  EXPECT_EQ(MetricValue(scrape, "slotserve_prefix_cache_misses_total"), 1.0) << scrape;
  EXPECT_EQ(MetricValue(scrape, "slotserve_prefix_cache_hits_total"), 1.0);
  EXPECT_EQ(MetricValue(scrape, "slotserve_prefix_cache_tokens_saved_total"), 64.0);
  EXPECT_GT(MetricValue(scrape, "slotserve_prefix_cache_bytes").value_or(0), 0.0);
  EXPECT_TRUE(PoolIsFull());
}

TEST_F(PrefixStateTest, PrefixBlockZeroTurnsTheCacheOff) {
  StartServer({"--prefix-block=0"});
  ASSERT_TRUE(Generate(*stub_, LongGreedyRequest()).status.ok());
  ASSERT_TRUE(Generate(*stub_, LongGreedyRequest()).status.ok());
  const std::string scrape = Scrape();
  EXPECT_EQ(MetricValue(scrape, "slotserve_prefix_cache_hits_total"), 0.0);
  EXPECT_EQ(MetricValue(scrape, "slotserve_prefix_cache_misses_total"), 0.0);
}

}  // namespace
}  // namespace slotserve::testing
