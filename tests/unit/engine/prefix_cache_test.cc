// Prefix states (docs/ARCHITECTURE.md "Request state"): the longest cached block-aligned prefix is
// found, always leaving a token to prefill; entries are verified token for token; the byte bound
// evicts least recently used first; the counters say what happened.
#include "engine/prefix_cache.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace slotserve::engine {
namespace {

std::vector<int32_t> Tokens(int count, int32_t first = 10) {
  std::vector<int32_t> tokens(count);
  std::iota(tokens.begin(), tokens.end(), first);
  return tokens;
}

std::vector<uint8_t> State(uint8_t tag, size_t bytes = 100) {
  return std::vector<uint8_t>(bytes, tag);
}

TEST(PrefixCacheTest, FindsTheLongestBlockAlignedPrefixLeavingATokenToPrefill) {
  PrefixCache cache(4, 1 << 20);
  const std::vector<int32_t> prompt = Tokens(13);
  const std::span<const int32_t> all(prompt);
  cache.Insert(all.first(4), State(1));
  cache.Insert(all.first(8), State(2));
  cache.Insert(all.first(12), State(3));
  std::optional<PrefixCache::Hit> hit = cache.Lookup(prompt);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->tokens, 12);
  EXPECT_EQ((*hit->state)[0], 3);
  // A 12-token prompt must keep its last token to prefill: the 8-token checkpoint.
  hit = cache.Lookup(all.first(12));
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->tokens, 8);
  // A prompt that differs inside the second block only matches the first block.
  std::vector<int32_t> diverging = prompt;
  diverging[6] = 999;
  hit = cache.Lookup(diverging);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->tokens, 4);
  EXPECT_FALSE(cache.Lookup(Tokens(13, 500)));
  EXPECT_EQ(cache.stats().hits, 3);
  EXPECT_EQ(cache.stats().misses, 1);
  EXPECT_EQ(cache.stats().tokens_saved, 12 + 8 + 4);
}

TEST(PrefixCacheTest, RefusesUnalignedPrefixesAndSaysWhatIsNew) {
  PrefixCache cache(4, 1 << 20);
  const std::vector<int32_t> prompt = Tokens(8);
  const std::span<const int32_t> all(prompt);
  EXPECT_FALSE(cache.Wants(all.first(5)));
  cache.Insert(all.first(5), State(1));
  EXPECT_EQ(cache.stats().entries, 0);
  EXPECT_TRUE(cache.Wants(all.first(4)));
  cache.Insert(all.first(4), State(1));
  EXPECT_FALSE(cache.Wants(all.first(4)));
  EXPECT_EQ(cache.stats().entries, 1);
  EXPECT_EQ(cache.stats().bytes, 100 + 4 * 4);
}

TEST(PrefixCacheTest, TheByteBoundEvictsTheLeastRecentlyUsed) {
  const int64_t entry_bytes = 100 + 4 * 4;
  PrefixCache cache(4, 2 * entry_bytes);
  const std::vector<int32_t> a = Tokens(5, 0), b = Tokens(5, 100), c = Tokens(5, 200);
  cache.Insert(std::span(a).first(4), State(1));
  cache.Insert(std::span(b).first(4), State(2));
  ASSERT_TRUE(cache.Lookup(a));  // a is now more recent than b
  cache.Insert(std::span(c).first(4), State(3));
  EXPECT_TRUE(cache.Lookup(a));
  EXPECT_FALSE(cache.Lookup(b));
  EXPECT_TRUE(cache.Lookup(c));
  EXPECT_EQ(cache.stats().evictions, 1);
  EXPECT_EQ(cache.stats().entries, 2);
  EXPECT_EQ(cache.stats().bytes, 2 * entry_bytes);
  PrefixCache nothing(4, 0);
  nothing.Insert(std::span(a).first(4), State(1));
  EXPECT_FALSE(nothing.Lookup(a));
}

}  // namespace
}  // namespace slotserve::engine
