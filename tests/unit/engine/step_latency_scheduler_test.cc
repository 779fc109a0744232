// --max-step-latency inside the real scheduler (engine/step_latency_budget.h wired through
// scheduler.cc and step_runner.cc), over the scripted fake model: a prompt that arrives while
// a stream decodes is fed in chunks cut to the latency cap; with the cap off, in full chunks.
// A target of 1 us is below any measured decode step, so the cap is its floor of one token
// whatever this machine's speed: the test does not depend on timing.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "engine/scheduler.h"
#include "tests/unit/engine/fake_language_model.h"
#include "tests/unit/engine/greedy_request.h"
#include "tests/unit/engine/recording_sink.h"

namespace slotserve::engine {
namespace {

using testing::FakeLanguageModel;
using testing::RecordingSink;

// Every model call of every step, in order: a prefill right after a decode ran beside it.
class StepLog : public EngineObserver {
 public:
  void OnStep(StepPhase phase, int size, absl::Duration) override {
    std::lock_guard lock(mu_);
    calls_.emplace_back(phase, size);
  }
  // Sizes of the prompt chunks that ran in a step that also decoded.
  std::vector<int> ChunksBesideDecode() const {
    std::lock_guard lock(mu_);
    std::vector<int> chunks;
    for (size_t i = 1; i < calls_.size(); ++i) {
      if (calls_[i].first == StepPhase::kPrefill && calls_[i - 1].first == StepPhase::kDecode) {
        chunks.push_back(calls_[i].second);
      }
    }
    return chunks;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<StepPhase, int>> calls_;
};

using testing::Greedy;

// Starts a stream, waits until it decodes, sends a 300-token prompt beside it and returns
// the sizes of the prompt chunks that ran beside the decode batch.
std::vector<int> ChunksBesideAStream(const StepLatencyTarget& target) {
  StepLog log;
  SchedulerOptions options;
  options.max_slots = 4;
  options.prefix_block = 0;  // no block boundaries: chunk sizes are the cap's alone
  options.max_step_latency = target;
  auto model = std::make_unique<FakeLanguageModel>();
  // Slow enough calls that the stream (4,000 tokens: 0.8 s) outlasts the prompt (300 steps of
  // two calls: 0.12 s) by far.
  model->set_call_delay(absl::Microseconds(200));
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler =
      Scheduler::Create(std::move(model), nullptr, options, &log);
  EXPECT_TRUE(scheduler.ok()) << scheduler.status();
  if (!scheduler.ok()) return {};
  (*scheduler)->Start();
  auto stream = std::make_shared<RecordingSink>();
  EXPECT_TRUE((*scheduler)->Submit(Greedy({5, 6, 7}, 4000), stream).ok());
  EXPECT_TRUE(stream->WaitTokens(2));
  auto prompt = std::make_shared<RecordingSink>();
  EXPECT_TRUE((*scheduler)->Submit(Greedy(std::vector<int32_t>(300, 5), 1), prompt).ok());
  const std::optional<Finished> finished = prompt->WaitFinished();
  EXPECT_TRUE(finished.has_value() && finished->status.ok());
  EXPECT_LT(stream->ids().size(), 4000u) << "the stream must outlast the prompt's prefill";
  (*scheduler)->Stop();
  return log.ChunksBesideDecode();
}

TEST(StepLatencySchedulerTest, BesideADecodingStreamAPromptIsFedInChunksCutToTheCap) {
  const std::vector<int> chunks = ChunksBesideAStream(
      {.mode = StepLatencyTarget::Mode::kFixed, .fixed = absl::Microseconds(1)});
  // The stream's own 3-token prompt was measured alone, so the cap is known: 1 token a step.
  ASSERT_EQ(chunks.size(), 300u);
  for (int chunk : chunks) EXPECT_EQ(chunk, 1);
}

TEST(StepLatencySchedulerTest, WithTheCapOffThePromptRunsInFullChunks) {
  const std::vector<int> chunks = ChunksBesideAStream({.mode = StepLatencyTarget::Mode::kOff});
  EXPECT_EQ(chunks, (std::vector<int>{256, 44}));
}

}  // namespace
}  // namespace slotserve::engine
