// docs/ARCHITECTURE.md "Request state" prefix states on every golden model (each attention kind) on
// the real CPU backend: a request restored from a cached block-aligned prefix gives bitwise the
// same greedy tokens and logprobs as the same request prefilled from token 0.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/scheduler.h"
#include "tests/unit/engine/golden_scheduler.h"
#include "tests/unit/engine/recording_sink.h"

namespace slotserve::engine {
namespace {

class PrefixStatsObserver : public EngineObserver {
 public:
  void OnPrefixCacheStats(const PrefixCacheStats& stats) override {
    std::lock_guard lock(mu_);
    stats_ = stats;
  }
  PrefixCacheStats stats() const {
    std::lock_guard lock(mu_);
    return stats_;
  }

 private:
  mutable std::mutex mu_;
  PrefixCacheStats stats_;
};

std::unique_ptr<Scheduler> StartScheduler(const std::filesystem::path& dir, int prefix_block,
                                          EngineObserver* observer) {
  SchedulerOptions options;
  options.max_slots = 4;
  options.prefill_chunk = 64;
  options.prefix_block = prefix_block;
  return testing::StartGoldenScheduler(dir, options, observer);
}

GenerationRequest Greedy(std::vector<int32_t> prompt) {
  GenerationRequest request;
  request.prompt_ids = std::move(prompt);
  request.sampling.temperature = 0.0f;
  request.stopping.max_new_tokens = 16;
  request.stopping.ignore_eos = true;
  request.logprobs.enabled = true;
  request.logprobs.top_n = 5;
  return request;
}

struct Output {
  std::vector<int32_t> ids;
  std::vector<GeneratedTokenLogprobs> logprobs;
};

Output RunToEnd(Scheduler& scheduler, const GenerationRequest& request) {
  auto sink = std::make_shared<testing::RecordingSink>();
  EXPECT_TRUE(scheduler.Submit(request, sink).ok());
  std::optional<Finished> finished = sink->WaitFinished();
  EXPECT_TRUE(finished && finished->status.ok());
  Output output{sink->ids(), {}};
  for (const TokenChunk& chunk : sink->chunks()) {
    output.logprobs.insert(output.logprobs.end(), chunk.logprobs.begin(), chunk.logprobs.end());
  }
  return output;
}

void ExpectBitwiseEqual(const Output& a, const Output& b) {
  ASSERT_EQ(a.ids, b.ids);
  ASSERT_EQ(a.logprobs.size(), b.logprobs.size());
  for (size_t i = 0; i < a.logprobs.size(); ++i) {
    EXPECT_EQ(a.logprobs[i].chosen.logprob, b.logprobs[i].chosen.logprob) << "token " << i;
    ASSERT_EQ(a.logprobs[i].top.size(), b.logprobs[i].top.size());
    for (size_t k = 0; k < a.logprobs[i].top.size(); ++k) {
      EXPECT_EQ(a.logprobs[i].top[k].id, b.logprobs[i].top[k].id);
      EXPECT_EQ(a.logprobs[i].top[k].logprob, b.logprobs[i].top[k].logprob);
    }
  }
}

class PrefixStateTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PrefixStateTest, AHitGivesBitwiseTheTokensAndLogprobsOfAMiss) {
  const std::filesystem::path dir = testing::GoldenModelDir(GetParam());
  if (!std::filesystem::exists(dir / "config.json")) GTEST_SKIP() << "no model at " << dir;
  std::vector<int32_t> prompt;
  for (int t = 0; t < 41; ++t) prompt.push_back(3 + (t * 7) % 50);
  std::vector<int32_t> sibling(prompt.begin(), prompt.begin() + 24);  // shares 3 blocks
  for (int t = 0; t < 9; ++t) sibling.push_back(5 + (t * 3) % 40);

  PrefixStatsObserver observer;
  std::unique_ptr<Scheduler> scheduler = StartScheduler(dir, 8, &observer);
  ASSERT_NE(scheduler, nullptr);
  const Output miss = RunToEnd(*scheduler, Greedy(prompt));
  EXPECT_EQ(observer.stats().misses, 1);
  EXPECT_EQ(observer.stats().entries, 5) << "checkpoints at 8, 16, 24, 32, 40";
  EXPECT_GT(observer.stats().bytes, 0);
  const Output hit = RunToEnd(*scheduler, Greedy(prompt));
  EXPECT_EQ(observer.stats().hits, 1);
  EXPECT_EQ(observer.stats().tokens_saved, 40);
  ExpectBitwiseEqual(hit, miss);

  const Output sibling_hit = RunToEnd(*scheduler, Greedy(sibling));
  EXPECT_EQ(observer.stats().hits, 2);
  EXPECT_EQ(observer.stats().tokens_saved, 40 + 24);
  std::unique_ptr<Scheduler> cold = StartScheduler(dir, 8, nullptr);
  ASSERT_NE(cold, nullptr);
  ExpectBitwiseEqual(sibling_hit, RunToEnd(*cold, Greedy(sibling)));
  EXPECT_TRUE(scheduler->WaitIdle(absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(scheduler->stats().slots_used, 0);
}

INSTANTIATE_TEST_SUITE_P(GoldenModels, PrefixStateTest, testing::kGoldenKinds);

}  // namespace
}  // namespace slotserve::engine
