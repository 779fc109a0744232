// docs/ARCHITECTURE.md "Request state" fork on every golden model (each attention kind) on the real
// CPU backend: a request with n choices prefills once, copies its state into n slots, and choice i
// gives the tokens a single request with seed + i gives; every choice ends once, the last one
// marked request_done, and the pool is full again afterwards.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/scheduler.h"
#include "tests/unit/engine/golden_scheduler.h"

namespace slotserve::engine {
namespace {

// Records each choice's ids and Finished.
class ChoicesSink : public GenerationSink {
 public:
  void OnTokens(const TokenChunk& chunk) override {
    std::lock_guard lock(mu_);
    auto& ids = ids_[chunk.choice_index];
    ids.insert(ids.end(), chunk.ids.begin(), chunk.ids.end());
  }
  void OnFinished(const Finished& finished) override {
    std::lock_guard lock(mu_);
    finished_.push_back(finished);
    if (finished.request_done) cv_.notify_all();
  }
  bool WaitDone() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20),
                        [&] { return !finished_.empty() && finished_.back().request_done; });
  }
  std::map<int, std::vector<int32_t>> ids() const {
    std::lock_guard lock(mu_);
    return ids_;
  }
  std::vector<Finished> finished() const {
    std::lock_guard lock(mu_);
    return finished_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<int, std::vector<int32_t>> ids_;
  std::vector<Finished> finished_;
};

std::unique_ptr<Scheduler> StartScheduler(const std::filesystem::path& dir) {
  SchedulerOptions options;
  options.max_slots = 4;
  options.prefix_block = 8;
  return testing::StartGoldenScheduler(dir, options);
}

GenerationRequest Sampled(int n, uint64_t seed) {
  GenerationRequest request;
  // 9 tokens: the fork point (8) is a block boundary, so the single requests run the same
  // chunks as the fork (8, then 1).
  request.prompt_ids = {1, 7, 19, 33, 4, 8, 21, 40, 12};
  request.sampling.temperature = 1.0f;
  request.sampling.seed = seed;
  request.stopping.max_new_tokens = 12;
  request.stopping.ignore_eos = true;
  request.n = n;
  return request;
}

class ForkTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ForkTest, ChoiceIGivesTheTokensOfASingleRequestWithSeedPlusI) {
  const std::filesystem::path dir = testing::GoldenModelDir(GetParam());
  if (!std::filesystem::exists(dir / "config.json")) GTEST_SKIP() << "no model at " << dir;
  std::unique_ptr<Scheduler> scheduler = StartScheduler(dir);
  ASSERT_NE(scheduler, nullptr);
  std::vector<std::vector<int32_t>> singles;
  for (int i = 0; i < 3; ++i) {
    auto sink = std::make_shared<ChoicesSink>();
    ASSERT_TRUE(scheduler->Submit(Sampled(1, 500 + i), sink).ok());
    ASSERT_TRUE(sink->WaitDone());
    singles.push_back(sink->ids()[0]);
  }
  auto sink = std::make_shared<ChoicesSink>();
  ASSERT_TRUE(scheduler->Submit(Sampled(3, 500), sink).ok());
  ASSERT_TRUE(sink->WaitDone());
  const std::vector<Finished> finished = sink->finished();
  ASSERT_EQ(finished.size(), 3u);
  std::vector<int> indexes;
  for (const Finished& f : finished) {
    EXPECT_TRUE(f.status.ok()) << f.status;
    EXPECT_EQ(f.seed, 500u + f.choice_index);
    EXPECT_EQ(f.generated_tokens, 12);
    indexes.push_back(f.choice_index);
    EXPECT_EQ(f.request_done, &f == &finished.back());
  }
  std::sort(indexes.begin(), indexes.end());
  EXPECT_EQ(indexes, (std::vector<int>{0, 1, 2}));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(sink->ids()[i], singles[i]) << "choice " << i;
  EXPECT_NE(singles[0], singles[1]);
  EXPECT_TRUE(scheduler->WaitIdle(absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(scheduler->stats().slots_used, 0);
}

TEST_P(ForkTest, AForkWaitsForNFreeSlotsAndACancelEndsEveryChoice) {
  const std::filesystem::path dir = testing::GoldenModelDir(GetParam());
  if (!std::filesystem::exists(dir / "config.json")) GTEST_SKIP() << "no model at " << dir;
  std::unique_ptr<Scheduler> scheduler = StartScheduler(dir);
  ASSERT_NE(scheduler, nullptr);
  GenerationRequest too_many = Sampled(5, 1);
  EXPECT_EQ(scheduler->Submit(too_many, std::make_shared<ChoicesSink>()).status().code(),
            absl::StatusCode::kInvalidArgument)
      << "n above the pool's 4 slots";
  if (GetParam() == "softmax") {
    // Its 64-position context ends the choices within a millisecond, before a cancel can.
    GTEST_SKIP() << "the golden softmax model's context is too short to cancel mid-stream";
  }
  GenerationRequest forever = Sampled(4, 9);
  forever.stopping.max_new_tokens = 4000;
  auto sink = std::make_shared<ChoicesSink>();
  absl::StatusOr<RequestId> id = scheduler->Submit(forever, sink);
  ASSERT_TRUE(id.ok());
  while (sink->ids()[3].size() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(scheduler->stats().slots_used, 4);
  EXPECT_TRUE(scheduler->Cancel(*id));
  ASSERT_TRUE(sink->WaitDone());
  ASSERT_EQ(sink->finished().size(), 4u);
  for (const Finished& f : sink->finished()) {
    EXPECT_EQ(f.status.code(), absl::StatusCode::kCancelled);
  }
  EXPECT_TRUE(scheduler->WaitIdle(absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(scheduler->stats().slots_used, 0);
}

INSTANTIATE_TEST_SUITE_P(GoldenModels, ForkTest, testing::kGoldenKinds);

}  // namespace
}  // namespace slotserve::engine
