// SchedulerOptions::max_context_tokens: a served context shorter than the model's own ends
// generation (length) and refuses prompts as the model's own limit does, over a fake model.
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

std::unique_ptr<Scheduler> Create(int32_t model_positions, int64_t max_context_tokens) {
  auto model = std::make_unique<FakeLanguageModel>();
  model->set_max_positions(model_positions);
  SchedulerOptions options;
  options.max_context_tokens = max_context_tokens;
  return testing::StartedScheduler(std::move(model), options);
}

TEST(MaxContextTest, IsTheModelsUnlessSmaller) {
  EXPECT_EQ(Create(1000, 0)->max_context(), 1000);
  EXPECT_EQ(Create(1000, 8)->max_context(), 8);
  EXPECT_EQ(Create(6, 8)->max_context(), 6);
}

TEST(MaxContextTest, EndsGenerationAtTheServedContext) {
  std::unique_ptr<Scheduler> scheduler = Create(1000, 8);
  ASSERT_NE(scheduler, nullptr);
  auto sink = std::make_shared<RecordingSink>();
  ASSERT_TRUE(scheduler->Submit(Greedy({5, 6, 7, 8, 9}, 100), sink).ok());
  std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished);
  EXPECT_EQ(finished->reason, FinishReason::kLength);
  // Positions 0..7 are used: the prompt's five and three generated tokens fed back; the
  // fourth generated token is not fed.
  EXPECT_EQ(finished->generated_tokens, 4);
}

TEST(MaxContextTest, RefusesALongerPrompt) {
  std::unique_ptr<Scheduler> scheduler = Create(1000, 8);
  ASSERT_NE(scheduler, nullptr);
  auto sink = std::make_shared<RecordingSink>();
  const absl::Status status =
      scheduler->Submit(Greedy({3, 3, 3, 3, 3, 3, 3, 3, 3}, 1), sink).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("prompt must be at most 8 tokens"), std::string::npos) << status;
}

TEST(MaxContextTest, ANegativeValueIsRefused) {
  SchedulerOptions options;
  options.max_context_tokens = -1;
  EXPECT_EQ(options.Validate().message(),
            "max_context_tokens must be >= 0 (0 = the model's), got -1");
}

}  // namespace
}  // namespace slotserve::engine
