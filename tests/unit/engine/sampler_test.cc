// Sampler statistics and exact penalty arithmetic (docs/ARCHITECTURE.md "A request's path" sampling
// options): the engine's tokens come from the selection op (kernels/sampling.h; the cpu backend on
// the host), fed by each request's RequestSampler rows; logprobs from the raw logits.
#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "engine/token_logprobs.h"
#include "kernels/counter_rng.h"
#include "kernels/sampling.h"
#include "tests/unit/engine/host_selection.h"

namespace slotserve::engine {

using kernels::UniformDraw;
using testing::SelectOnHost;
namespace {

std::vector<float> RandomLogits(int vocab, uint32_t seed, float scale = 3.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> logits(vocab);
  for (float& l : logits) l = normal(gen);
  return logits;
}

// Independent of the sampler: softmax(logits / temperature) in double.
std::vector<double> Softmax(const std::vector<float>& logits, double temperature) {
  const double max = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p(logits.size());
  double sum = 0.0;
  for (size_t i = 0; i < logits.size(); ++i)
    sum += p[i] = std::exp((logits[i] - max) / temperature);
  for (double& x : p) x /= sum;
  return p;
}

// Ids by descending probability.
std::vector<int> RankOrder(const std::vector<double>& p) {
  std::vector<int> ids(p.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) { return p[a] > p[b]; });
  return ids;
}

std::vector<int> Draw(const std::vector<float>& logits, const SamplingOptions& options, int n,
                      uint64_t seed = 7) {
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < n; ++i) ++counts[SelectOnHost(logits, options, seed, i)];
  return counts;
}

// The probabilities the host op draws from (kernels::SamplingDistribution).
std::vector<double> SamplingDistribution(const std::vector<float>& logits,
                                         const SamplingOptions& options) {
  return kernels::SamplingDistribution(logits, options.temperature, options.top_k, options.top_p,
                                       options.min_p);
}

// The op's penalties from `history` applied to `logits` in place (greedy, so only the
// adjustment matters).
void ApplyPenalties(SamplingOptions options, const TokenHistory& history,
                    std::vector<float>& logits) {
  options.temperature = 0.0f;
  SelectOnHost(logits, testing::RowOf(options, 0, 0, history.penalised()));
}

TEST(SamplerTest, TopKNeverEmitsOutsideTheKBest) {
  const std::vector<float> logits = RandomLogits(50, 1, 1.0f);
  SamplingOptions options;
  options.top_k = 5;
  const std::vector<int> ranked = RankOrder(Softmax(logits, 1.0));
  const std::set<int> best(ranked.begin(), ranked.begin() + 5);
  const std::vector<int> counts = Draw(logits, options, 20000);
  for (int id = 0; id < 50; ++id) {
    if (best.contains(id)) {
      EXPECT_GT(counts[id], 0) << "top-k token " << id << " never drawn";
    } else {
      EXPECT_EQ(counts[id], 0) << "token " << id << " is outside the top 5";
    }
  }
}

TEST(SamplerTest, TopPKeepsTheSmallestSetReachingP) {
  const std::vector<float> logits = RandomLogits(40, 2);
  SamplingOptions options;
  options.top_p = 0.8f;
  const std::vector<double> p = Softmax(logits, 1.0);
  std::set<int> nucleus;
  double mass = 0.0;
  for (int id : RankOrder(p)) {
    nucleus.insert(id);
    mass += p[id];
    if (mass >= 0.8) break;
  }
  ASSERT_LT(nucleus.size(), 40u);
  const std::vector<double> kept = SamplingDistribution(logits, options);
  const std::vector<int> counts = Draw(logits, options, 20000);
  for (int id = 0; id < 40; ++id) {
    EXPECT_EQ(kept[id] > 0.0, nucleus.contains(id)) << "id " << id;
    if (!nucleus.contains(id)) {
      EXPECT_EQ(counts[id], 0) << "id " << id;
    }
  }
  // Renormalised over the nucleus.
  for (int id : nucleus) EXPECT_NEAR(kept[id], p[id] / mass, 1e-9);
}

TEST(SamplerTest, MinPDropsTokensBelowAFractionOfTheBest) {
  const std::vector<float> logits = RandomLogits(40, 3);
  SamplingOptions options;
  options.min_p = 0.1f;
  const std::vector<double> p = Softmax(logits, 1.0);
  const double best = *std::max_element(p.begin(), p.end());
  const std::vector<double> kept = SamplingDistribution(logits, options);
  const std::vector<int> counts = Draw(logits, options, 5000);
  int support = 0;
  for (int id = 0; id < 40; ++id) {
    const bool expected = p[id] >= 0.1 * best;
    support += expected;
    EXPECT_EQ(kept[id] > 0.0, expected) << "id " << id;
    if (!expected) {
      EXPECT_EQ(counts[id], 0) << "id " << id;
    }
  }
  EXPECT_GT(support, 1);
  EXPECT_LT(support, 40);
}

TEST(SamplerTest, TopKThenTopPThenMinPCompose) {
  const std::vector<float> logits = RandomLogits(60, 4);
  SamplingOptions options;
  options.top_k = 10;
  options.top_p = 0.9f;
  options.min_p = 0.05f;
  const std::vector<int> ranked = RankOrder(Softmax(logits, 1.0));
  const std::set<int> top10(ranked.begin(), ranked.begin() + 10);
  const std::vector<double> kept = SamplingDistribution(logits, options);
  for (int id = 0; id < 60; ++id) {
    if (kept[id] > 0.0) {
      EXPECT_TRUE(top10.contains(id)) << "id " << id;
    }
  }
  EXPECT_NEAR(std::accumulate(kept.begin(), kept.end(), 0.0), 1.0, 1e-9);
}

TEST(SamplerTest, TemperatureZeroIsGreedyAndTinyTemperatureMatchesIt) {
  std::vector<float> logits = RandomLogits(100, 5);
  const int32_t best =
      static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  SamplingOptions greedy;
  greedy.temperature = 0.0f;
  SamplingOptions cold;
  cold.temperature = 1e-3f;
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(SelectOnHost(logits, greedy, 1, i), best);
    EXPECT_EQ(SelectOnHost(logits, cold, 1, i), best);
  }
  // Ties go to the lowest id.
  std::vector<float> tied = {0.0f, 3.0f, 1.0f, 3.0f};
  EXPECT_EQ(SelectOnHost(tied, greedy, 1, 0), 1);
}

TEST(SamplerTest, EmpiricalFrequenciesMatchTheSoftmax) {
  const std::vector<float> logits = {1.0f, 0.5f, -0.2f, 2.0f, 0.0f, -1.0f, 1.5f, 0.3f};
  SamplingOptions options;
  options.temperature = 0.7f;
  const int n = 40000;
  const std::vector<int> counts = Draw(logits, options, n, /*seed=*/2024);
  const std::vector<double> p = Softmax(logits, 0.7);
  double chi_square = 0.0;
  for (size_t id = 0; id < p.size(); ++id) {
    const double expected = n * p[id];
    chi_square += (counts[id] - expected) * (counts[id] - expected) / expected;
  }
  // 7 degrees of freedom: P(chi2 > 24.32) = 0.001.
  EXPECT_LT(chi_square, 24.32);
}

TEST(SamplerTest, RepetitionPenaltyDividesPositiveAndMultipliesNegativeLogits) {
  std::vector<float> logits = {2.0f, -2.0f, 4.0f, -1.0f, 3.0f};
  const std::vector<int32_t> prompt = {0, 1};
  TokenHistory history(prompt);
  history.AddGenerated(2);
  SamplingOptions options;
  options.repetition_penalty = 2.0f;
  ApplyPenalties(options, history, logits);
  EXPECT_FLOAT_EQ(logits[0], 1.0f);   // prompt, positive: / 2
  EXPECT_FLOAT_EQ(logits[1], -4.0f);  // prompt, negative: * 2
  EXPECT_FLOAT_EQ(logits[2], 2.0f);   // generated
  EXPECT_FLOAT_EQ(logits[3], -1.0f);  // unseen: unchanged
  EXPECT_FLOAT_EQ(logits[4], 3.0f);
}

TEST(SamplerTest, PresenceAndFrequencyPenaltiesCountGeneratedTokensOnly) {
  std::vector<float> logits = {1.0f, 1.0f, 1.0f, 1.0f};
  const std::vector<int32_t> prompt = {3};
  TokenHistory history(prompt);
  history.AddGenerated(0);
  history.AddGenerated(1);
  history.AddGenerated(1);
  history.AddGenerated(1);
  SamplingOptions options;
  options.presence_penalty = 0.5f;
  options.frequency_penalty = 0.25f;
  ApplyPenalties(options, history, logits);
  EXPECT_FLOAT_EQ(logits[0], 1.0f - 0.5f - 0.25f);
  EXPECT_FLOAT_EQ(logits[1], 1.0f - 0.5f - 0.75f);
  EXPECT_FLOAT_EQ(logits[2], 1.0f);
  EXPECT_FLOAT_EQ(logits[3], 1.0f);  // prompt tokens are not penalised by these two
}

TEST(SamplerTest, MaskedTokensAreNeverSampled) {
  std::vector<float> logits = {0.0f, 9.0f, 8.0f, 0.0f};
  const std::vector<int32_t> masked = {1};
  SamplingOptions greedy;
  greedy.temperature = 0.0f;
  RequestSampler sampler(greedy, 1, {});
  EXPECT_EQ(SelectOnHost(logits, testing::NextRow(sampler, masked)), 2);
}

// The request's logit_bias rides on every row: the draws follow softmax(logits + bias), the
// frequencies checked against that closed form.
TEST(SamplerTest, LogitBiasShiftsTheDistributionOfEveryDraw) {
  const std::vector<float> logits = {1.0f, 0.5f, -0.2f, 2.0f, 0.0f, -1.0f};
  const std::vector<kernels::BiasedToken> bias = {{3, -2.5f}, {5, 2.0f}, {2, 1.0f}};
  SamplingOptions options;
  options.temperature = 1.0f;
  RequestSampler sampler(options, 99, {}, bias);
  std::vector<float> biased = logits;
  for (const kernels::BiasedToken& b : bias) biased[b.id] += b.bias;
  const std::vector<double> p = Softmax(biased, 1.0);
  const int n = 40000;
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < n; ++i) {
    std::vector<float> row = logits;
    ++counts[testing::SelectAndAccept(sampler, row)];
  }
  double chi_square = 0.0;
  for (size_t id = 0; id < p.size(); ++id) {
    const double expected = n * p[id];
    chi_square += (counts[id] - expected) * (counts[id] - expected) / expected;
  }
  // 5 degrees of freedom: P(chi2 > 20.52) = 0.001.
  EXPECT_LT(chi_square, 20.52);
  // Greedy with -100 on the argmax picks the runner-up.
  SamplingOptions greedy;
  greedy.temperature = 0.0f;
  const std::vector<kernels::BiasedToken> ban = {{3, -100.0f}};
  RequestSampler banned(greedy, 1, {}, ban);
  std::vector<float> row = logits;
  EXPECT_EQ(SelectOnHost(row, testing::NextRow(banned)), 0);
}

TEST(SamplerTest, SeededStreamsRepeatAndDifferentSeedsDiffer) {
  const std::vector<float> base = RandomLogits(30, 6, 1.0f);
  auto run = [&](uint64_t seed) {
    RequestSampler sampler(SamplingOptions{}, seed, {});
    std::vector<int32_t> tokens;
    for (int i = 0; i < 64; ++i) {
      std::vector<float> logits = base;
      tokens.push_back(testing::SelectAndAccept(sampler, logits));
    }
    return tokens;
  };
  EXPECT_EQ(run(42), run(42));
  EXPECT_NE(run(42), run(43));
}

TEST(SamplerTest, LogprobsAreTheRawLogSoftmaxWithSortedAlternatives) {
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f, 1.0f};
  const GeneratedTokenLogprobs result = ComputeLogprobs(logits, 4, 3);
  const std::vector<double> p = Softmax(logits, 1.0);
  EXPECT_EQ(result.chosen.id, 4);
  EXPECT_NEAR(result.chosen.logprob, std::log(p[4]), 1e-6);
  ASSERT_EQ(result.top.size(), 3u);
  EXPECT_EQ(result.top[0].id, 1);  // tie with 3: lower id first
  EXPECT_EQ(result.top[1].id, 3);
  EXPECT_EQ(result.top[2].id, 4);
  for (const TokenLogprob& alt : result.top) EXPECT_NEAR(alt.logprob, std::log(p[alt.id]), 1e-6);
}

// The host's op (the cpu backend: partial selection, no full sort) and the reference op (a sort
// per row, as the rule reads) must pick the same token for the same logits, options and draw.
TEST(SamplerTest, AgreesWithTheReferenceSamplingOp) {
  const int vocab = 300;
  const int rows = 400;
  std::vector<float> logits;
  std::vector<float> temperature, top_p, min_p;
  std::vector<int32_t> top_k;
  std::vector<uint64_t> seeds, draws;
  std::mt19937 gen(11);
  for (int r = 0; r < rows; ++r) {
    const std::vector<float> row = RandomLogits(vocab, 1000 + r, 1.0f + r % 4);
    logits.insert(logits.end(), row.begin(), row.end());
    temperature.push_back(r % 7 == 0 ? 0.0f : 0.3f + 0.2f * (r % 6));
    top_k.push_back(r % 3 == 0 ? 0 : 1 + r % 50);
    top_p.push_back(r % 4 == 0 ? 1.0f : 0.5f + 0.1f * (r % 5));
    min_p.push_back(r % 5 == 0 ? 0.0f : 0.01f * (r % 9));
    seeds.push_back(gen());
    draws.push_back(r);
  }
  std::vector<int32_t> kernel_tokens(rows);
  kernels::SamplingParams params;
  params.logits = logits.data();
  params.logits_stride = vocab;
  params.rows = rows;
  params.vocab = vocab;
  params.temperature = temperature.data();
  params.top_k = top_k.data();
  params.top_p = top_p.data();
  params.min_p = min_p.data();
  params.seeds = seeds.data();
  params.draw_index = draws.data();
  params.out_tokens = kernel_tokens.data();
  kernels::LaunchSampling(kernels::Backend::kReference, params);
  int differ = 0;
  for (int r = 0; r < rows; ++r) {
    SamplingOptions options;
    options.temperature = temperature[r];
    options.top_k = top_k[r];
    options.top_p = top_p[r];
    options.min_p = min_p[r];
    const std::span<const float> row(logits.data() + r * vocab, vocab);
    differ += SelectOnHost(row, options, seeds[r], draws[r]) != kernel_tokens[r];
  }
  EXPECT_EQ(differ, 0) << "rows where the host op and the reference op disagree";
}

TEST(SamplerTest, UniformDrawIsInUnitIntervalAndDependsOnBothKeys) {
  std::set<double> seen;
  for (uint64_t i = 0; i < 1000; ++i) {
    const double u = UniformDraw(99, i);
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
    seen.insert(u);
  }
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_NE(UniformDraw(1, 0), UniformDraw(2, 0));
}

}  // namespace
}  // namespace slotserve::engine
