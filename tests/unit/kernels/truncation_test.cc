// The cpu sampler's truncation (kernels/cpu/truncation.h, through SamplingDistribution)
// against the rule written out plainly: every finite token sorted by a comparator (higher logit
// first, lower id on ties), the first top_k kept, then the ones lighter than the floor skipped
// and the rest walked until their weight reaches top_p of their total. The kept tokens must be
// the same, not merely close: the draw that follows depends on every one of them.
#include "kernels/cpu/truncation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/sampling_weights.h"
#include "kernels/sampling.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::cpu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<int32_t> TruncatedByFullSort(const std::vector<float>& logits,
                                         const std::vector<double>& weights, int32_t top_k,
                                         float top_p) {
  std::vector<int32_t> ranked;
  for (size_t id = 0; id < logits.size(); ++id) {
    if (std::isfinite(logits[id])) ranked.push_back(static_cast<int32_t>(id));
  }
  const auto more_likely = [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  std::sort(ranked.begin(), ranked.end(), more_likely);
  if (top_k > 0 && static_cast<size_t>(top_k) < ranked.size()) ranked.resize(top_k);
  std::vector<int32_t> kept = ranked;
  std::sort(kept.begin(), kept.end());
  if (top_p >= 1.0f || kept.empty()) return kept;
  double total = 0.0;
  for (int32_t id : kept) total += weights[id];  // id order
  const double floor = (1.0 - top_p) * total / (2.0 * static_cast<double>(kept.size()));
  std::erase_if(ranked, [&](int32_t id) { return weights[id] < floor; });
  const double target = top_p * total;
  double cumulative = 0.0;
  for (size_t i = 0; i < ranked.size(); ++i) {
    cumulative += weights[ranked[i]];
    if (cumulative >= target) {
      ranked.resize(i + 1);
      break;
    }
  }
  std::sort(ranked.begin(), ranked.end());
  return ranked;
}

// Checks one row at one temperature, top_k and top_p through the cpu sampler's distribution
// (kernels/sampling.h, which truncates with truncation.h): the kept tokens, each with its
// weight over the kept tokens' total added in id order. Returns how many tokens are kept.
size_t ExpectSameTokens(const std::vector<float>& logits, float temperature, int32_t top_k,
                        float top_p) {
  const int n = static_cast<int>(logits.size());
  const float max_logit = MaxFinite(logits.data(), n);
  std::vector<double> weights(logits.size()), cumulative(logits.size());
  SamplingWeightsAndCumulative(logits.data(), n, max_logit, temperature, weights.data(),
                               cumulative.data());
  const std::vector<int32_t> kept = TruncatedByFullSort(logits, weights, top_k, top_p);
  double total = 0.0;
  for (int32_t id : kept) total += weights[id];
  std::vector<double> want(logits.size(), 0.0);
  for (int32_t id : kept) want[id] = weights[id] / total;
  const std::vector<double> got = SamplingDistribution(logits, temperature, top_k, top_p, 0.0f);
  EXPECT_EQ(got, want) << "vocab " << n << " temperature " << temperature << " top_k " << top_k
                       << " top_p " << top_p << ": " << kept.size() << " tokens kept";
  return kept.size();
}

TEST(TruncationTest, RandomRowsGiveTheFullSortsNucleus) {
  size_t smallest = std::numeric_limits<size_t>::max();
  size_t largest = 0;
  int row = 0;
  for (int vocab : {1, 7, 9, 513, 4000, 32003}) {
    for (float temperature : {0.05f, 0.8f, 1.0f, 2.5f}) {
      for (float top_p : {0.01f, 0.5f, 0.9f, 0.95f, 0.999f, 0.99999994f}) {
        const float spread = row % 2 == 0 ? 3.0f : 12.0f;
        const std::vector<float> logits =
            testing::RandomFloats(vocab, 100 + row++, -spread, spread);
        const size_t size = ExpectSameTokens(logits, temperature, 0, top_p);
        if (vocab >= 4000) {
          smallest = std::min(smallest, size);
          largest = std::max(largest, size);
        }
      }
    }
  }
  // The cases must reach both a nucleus of one token and one of most of the vocabulary.
  EXPECT_EQ(smallest, 1u);
  EXPECT_GT(largest, 3000u);
}

// Ties rank by id, also across +0 and -0; a tie at the boundary keeps only the lower ids.
TEST(TruncationTest, TiesRankByIdAtTheBoundary) {
  for (int vocab : {16, 1000, 4001}) {
    std::vector<float> logits(vocab);
    for (int id = 0; id < vocab; ++id) logits[id] = static_cast<float>((id * 7919) % 5) * 0.5f;
    for (int id = 3; id < vocab; id += 11) logits[id] = id % 2 == 0 ? 0.0f : -0.0f;
    for (float top_p : {0.1f, 0.3f, 0.5f, 0.77f, 0.9f}) {
      for (float temperature : {0.5f, 1.0f}) ExpectSameTokens(logits, temperature, 0, top_p);
    }
  }
  // Every logit equal: the nucleus is the lowest ids, ceil(top_p * vocab) of them.
  const std::vector<float> flat(1000, 1.25f);
  EXPECT_EQ(ExpectSameTokens(flat, 1.0f, 0, 0.25f), 250u);
}

TEST(TruncationTest, NonFiniteLogitsAreNeverKept) {
  for (int vocab : {5, 8, 9, 300, 4000}) {
    std::vector<float> logits = testing::RandomFloats(vocab, 17 + vocab, -5.0f, 5.0f);
    for (int id = 0; id < vocab; id += 3) {
      logits[id] = id % 9 == 0 ? -kInf : id % 9 == 3 ? kInf : std::nanf("");
    }
    for (float top_p : {0.3f, 0.9f, 0.999f}) ExpectSameTokens(logits, 0.7f, 0, top_p);
  }
  std::vector<int32_t> ids = {4};
  const std::vector<float> none = {-kInf, std::nanf(""), kInf};
  const std::vector<double> zero(3, 0.0);
  TopPIds(none, zero, -kInf, 0.0, 1.0f, 0.9f, ids);
  EXPECT_TRUE(ids.empty()) << "no finite logit leaves nothing to draw";
  ids = {4};
  TopKIds(none, -kInf, 1.0f, 2, ids);
  EXPECT_TRUE(ids.empty()) << "no finite logit leaves nothing to draw";
}

// Logits as far apart as floats go: the depth overflows to infinity and lands in the last
// bucket; weights underflow to 0.
TEST(TruncationTest, ExtremeLogitsAndHeavyTails) {
  const float big = std::numeric_limits<float>::max();
  std::vector<float> logits = {big, -big, 0.0f, big, 1e-30f, -1e30f, big * 0.5f, -3.0f, 7.0f};
  for (float top_p : {0.1f, 0.6f, 0.99999994f}) ExpectSameTokens(logits, 1.0f, 0, top_p);
  // A subnormal temperature: every weight but the top ones' underflows, and the buckets'
  // scale would be infinite.
  for (int32_t top_k : {0, 1, 3}) {
    for (float top_p : {0.5f, 1.0f}) ExpectSameTokens(logits, 1e-40f, top_k, top_p);
  }
  // A few heavy tokens and thousands of light ones far below them: the nucleus at top_p near
  // 1 reaches into the light ones, past the last bucket's depth.
  std::vector<float> tail = testing::RandomFloats(5000, 5, -40.0f, -20.0f);
  for (int id = 0; id < 5000; id += 997) tail[id] = 0.0f;
  for (float top_p : {0.5f, 0.999999f, 0.99999994f}) ExpectSameTokens(tail, 1.0f, 0, top_p);
}

TEST(TruncationTest, TopKAloneAndWithTopP) {
  int row = 0;
  for (int vocab : {2, 9, 513, 4000, 32003}) {
    for (int32_t top_k : {1, 2, 7, 50, 400, 3999, 4000, 100000}) {
      for (float top_p : {1.0f, 0.5f, 0.9f, 0.99999994f}) {
        std::vector<float> logits = testing::RandomFloats(vocab, 700 + row, -6.0f, 6.0f);
        if (row++ % 3 == 0) {  // ties and non-finite logits among them
          for (int id = 0; id < vocab; id += 5) logits[id] = id % 2 == 0 ? 1.5f : -kInf;
        }
        const float temperature = row % 2 == 0 ? 0.3f : 1.7f;
        const size_t kept = ExpectSameTokens(logits, temperature, top_k, top_p);
        if (top_p == 1.0f) {
          int finite = 0;
          for (float logit : logits) finite += std::isfinite(logit);
          EXPECT_EQ(kept, static_cast<size_t>(std::min(top_k, finite))) << "vocab " << vocab;
        }
      }
    }
  }
  // top_k cutting through a run of equal logits keeps its lowest ids.
  const std::vector<float> flat(300, -2.0f);
  std::vector<int32_t> ids;
  TopKIds(flat, -2.0f, 1.0f, 5, ids);
  EXPECT_EQ(ids, (std::vector<int32_t>{0, 1, 2, 3, 4}));
}

// Without top-k or top-p every finite token is kept: what min_p alone starts from.
TEST(TruncationTest, NoTruncationKeepsEveryFiniteToken) {
  const std::vector<float> logits = {0.5f, -kInf, 2.0f, std::nanf(""), -1.0f,
                                     kInf, 3.0f,  0.0f, -7.0f};
  EXPECT_EQ(ExpectSameTokens(logits, 1.0f, 0, 1.0f), 6u);
  EXPECT_EQ(ExpectSameTokens(logits, 1.0f, 6, 1.0f), 6u);
}

}  // namespace
}  // namespace slotserve::kernels::cpu
