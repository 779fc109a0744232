// The eos set (eos_ids.h): its union of the model's, the tokenizer's and the extra ids, and that
// every place a request stops on eos reads all of it: the stop check, ignore_eos,
// min_new_tokens' masking and beam search, over a scripted fake model.
#include "engine/eos_ids.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "engine/scheduler.h"
#include "tests/unit/engine/fake_language_model.h"
#include "tests/unit/engine/greedy_request.h"
#include "tests/unit/engine/recording_sink.h"
#include "tests/unit/engine/started_scheduler.h"

namespace slotserve::engine {
namespace {

using testing::FakeLanguageModel;
using testing::Greedy;
using testing::RecordingSink;

TEST(EosIdSetTest, IsTheSortedDistinctUnionWithoutMissingIds) {
  const std::vector<int32_t> extra = {40, 2, 7, 40};
  absl::StatusOr<std::vector<int32_t>> ids = EosIdSet(2, 9, extra, 64);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<int32_t>{2, 7, 9, 40}));
  ids = EosIdSet(-1, -1, {}, 64);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_TRUE(ids->empty());
}

TEST(EosIdSetTest, RefusesAnExtraIdOutsideTheVocabularyQuotingIt) {
  const std::vector<int32_t> extra = {3, 64};
  absl::StatusOr<std::vector<int32_t>> ids = EosIdSet(2, -1, extra, 64);
  EXPECT_EQ(ids.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ids.status().message(), "extra_eos_ids[1] must be in [0, 64) (the vocabulary), got 64");
}

constexpr int32_t kExtraEos = 40;  // the fake model's own eos is 2

// kExtraEos once `position` reaches 4, else 10; the runner-up is always the peak + 1.
std::unique_ptr<Scheduler> ExtraEosScheduler(SchedulerOptions options = {}) {
  options.extra_eos_ids = {kExtraEos};
  auto model = std::make_unique<FakeLanguageModel>(
      64, [](int32_t, int32_t position) { return position >= 4 ? kExtraEos : 10; });
  return testing::StartedScheduler(std::move(model), options);
}

std::optional<Finished> RunToTheEnd(Scheduler& scheduler, GenerationRequest request,
                                    std::vector<int32_t>* ids) {
  auto sink = std::make_shared<RecordingSink>();
  absl::StatusOr<RequestId> id = scheduler.Submit(std::move(request), sink);
  EXPECT_TRUE(id.ok()) << id.status();
  std::optional<Finished> finished = sink->WaitFinished();
  *ids = sink->ids();
  return finished;
}

TEST(EosIdsSchedulerTest, TheSchedulerReportsTheWholeSet) {
  std::unique_ptr<Scheduler> scheduler = ExtraEosScheduler();
  ASSERT_NE(scheduler, nullptr);
  EXPECT_EQ(scheduler->eos_ids(), (std::vector<int32_t>{2, kExtraEos}));
}

TEST(EosIdsSchedulerTest, AnExtraEosIdEndsTheRequestAsEos) {
  std::unique_ptr<Scheduler> scheduler = ExtraEosScheduler();
  ASSERT_NE(scheduler, nullptr);
  std::vector<int32_t> ids;
  std::optional<Finished> finished = RunToTheEnd(*scheduler, Greedy({5, 6}, 50), &ids);
  ASSERT_TRUE(finished);
  EXPECT_EQ(finished->reason, FinishReason::kEos);
  EXPECT_EQ(ids, (std::vector<int32_t>{10, 10, kExtraEos}));
}

TEST(EosIdsSchedulerTest, MinNewTokensMasksAnExtraEosId) {
  std::unique_ptr<Scheduler> scheduler = ExtraEosScheduler();
  ASSERT_NE(scheduler, nullptr);
  GenerationRequest request = Greedy({5, 6}, 50);
  request.stopping.min_new_tokens = 5;
  std::vector<int32_t> ids;
  std::optional<Finished> finished = RunToTheEnd(*scheduler, std::move(request), &ids);
  ASSERT_TRUE(finished);
  EXPECT_EQ(finished->reason, FinishReason::kEos);
  // The runner-up (41) replaces the extra eos until five tokens exist.
  EXPECT_EQ(ids, (std::vector<int32_t>{10, 10, 41, 41, 41, kExtraEos}));
}

TEST(EosIdsSchedulerTest, IgnoreEosIgnoresAnExtraEosId) {
  std::unique_ptr<Scheduler> scheduler = ExtraEosScheduler();
  ASSERT_NE(scheduler, nullptr);
  GenerationRequest request = Greedy({5, 6}, 5);
  request.stopping.ignore_eos = true;
  std::vector<int32_t> ids;
  std::optional<Finished> finished = RunToTheEnd(*scheduler, std::move(request), &ids);
  ASSERT_TRUE(finished);
  EXPECT_EQ(finished->reason, FinishReason::kLength);
  EXPECT_EQ(ids, (std::vector<int32_t>{10, 10, kExtraEos, kExtraEos, kExtraEos}));
}

TEST(EosIdsSchedulerTest, BeamSearchEndsHypothesesAtAnExtraEosId) {
  std::unique_ptr<Scheduler> scheduler = ExtraEosScheduler();
  ASSERT_NE(scheduler, nullptr);
  GenerationRequest request = Greedy({5, 6}, 50);
  request.beam = {.width = 2, .length_penalty = 0.0, .n_best = 1};
  std::vector<int32_t> ids;
  std::optional<Finished> finished = RunToTheEnd(*scheduler, std::move(request), &ids);
  ASSERT_TRUE(finished);
  ASSERT_EQ(finished->hypotheses.size(), 1u);
  EXPECT_EQ(finished->hypotheses[0].reason, FinishReason::kEos);
  ASSERT_FALSE(finished->hypotheses[0].ids.empty());
  EXPECT_EQ(finished->hypotheses[0].ids.back(), kExtraEos);
}

TEST(EosIdsSchedulerTest, CreateRefusesAnExtraEosIdOutsideTheVocabulary) {
  SchedulerOptions options;
  options.extra_eos_ids = {64};
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler =
      Scheduler::Create(std::make_unique<FakeLanguageModel>(64), nullptr, options);
  EXPECT_EQ(scheduler.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(scheduler.status().message(),
            "extra_eos_ids[0] must be in [0, 64) (the vocabulary), got 64");
}

}  // namespace
}  // namespace slotserve::engine
