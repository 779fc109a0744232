// The step latency budget (engine/step_latency_budget.h) on given costs, without a clock or
// threads: the running median, the target's parsing, and the prefill token cap derived from
// the measured decode step and per-token prefill cost.
#include "engine/step_latency_budget.h"

#include <gtest/gtest.h>

namespace slotserve::engine {
namespace {

TEST(RunningMedianTest, IsTheMiddleOfTheLastWindowSamples) {
  RunningMedian median(3);
  EXPECT_TRUE(median.empty());
  EXPECT_EQ(median.Median(), 0);
  median.Add(5);
  EXPECT_EQ(median.Median(), 5);
  median.Add(1);
  EXPECT_EQ(median.Median(), 1) << "the lower middle of an even count";
  median.Add(100);
  EXPECT_EQ(median.Median(), 5) << "one outlier does not move it";
  median.Add(2);  // the window is now 1, 100, 2: the 5 fell out
  median.Add(3);  // 100, 2, 3
  EXPECT_EQ(median.Median(), 3);
}

TEST(ParseStepLatencyTargetTest, AcceptsAutoOffAndPositiveDurations) {
  StepLatencyTarget target;
  std::string error;
  ASSERT_TRUE(ParseStepLatencyTarget("off", &target, &error));
  EXPECT_EQ(target.mode, StepLatencyTarget::Mode::kOff);
  ASSERT_TRUE(ParseStepLatencyTarget("auto", &target, &error));
  EXPECT_EQ(target.mode, StepLatencyTarget::Mode::kAuto);
  ASSERT_TRUE(ParseStepLatencyTarget("2.5ms", &target, &error));
  EXPECT_EQ(target.mode, StepLatencyTarget::Mode::kFixed);
  EXPECT_EQ(target.fixed, absl::Microseconds(2500));
  for (const char* bad : {"", "0s", "-1ms", "inf", "fast", "20"}) {
    EXPECT_FALSE(ParseStepLatencyTarget(bad, &target, &error)) << bad;
    EXPECT_NE(error.find("auto, off or a positive duration"), std::string::npos) << error;
  }
}

StepCostModel Costs(double decode_seconds, int prefill_tokens, double prefill_seconds) {
  StepCostModel costs;
  costs.ObserveDecode(8, decode_seconds);
  costs.ObservePrefill(prefill_tokens, prefill_seconds);
  return costs;
}

TEST(PrefillTokenCapTest, AutoLeavesTwoDecodeStepsForPrefill) {
  // 3 x a 2 ms decode step = 6 ms; 4 ms left at 50 us a token = 80 tokens.
  const StepLatencyTarget target{.mode = StepLatencyTarget::Mode::kAuto};
  EXPECT_EQ(PrefillTokenCap(target, Costs(0.002, 64, 64 * 50e-6)), 80);
}

TEST(PrefillTokenCapTest, AFixedTargetIsSpentAfterTheDecodeStep) {
  const StepLatencyTarget target{.mode = StepLatencyTarget::Mode::kFixed,
                                 .fixed = absl::Milliseconds(10)};
  // (10 ms - 2 ms) / 100 us = 80 tokens.
  EXPECT_EQ(PrefillTokenCap(target, Costs(0.002, 10, 0.001)), 80);
  // A target below the decode step still lets one token through: prompts advance.
  const StepLatencyTarget tight{.mode = StepLatencyTarget::Mode::kFixed,
                                .fixed = absl::Milliseconds(1)};
  EXPECT_EQ(PrefillTokenCap(tight, Costs(0.002, 10, 0.001)), 1);
}

TEST(PrefillTokenCapTest, OffOrNothingMeasuredMeansNoCap) {
  const StepLatencyTarget off{.mode = StepLatencyTarget::Mode::kOff};
  EXPECT_EQ(PrefillTokenCap(off, Costs(0.002, 10, 0.001)), 0);
  const StepLatencyTarget automatic{.mode = StepLatencyTarget::Mode::kAuto};
  EXPECT_EQ(PrefillTokenCap(automatic, StepCostModel()), 0)
      << "no decode step measured: nothing to derive the target from";
}

TEST(PrefillTokenCapTest, BeforeTheFirstPrefillIsMeasuredAProbeChunkRuns) {
  StepCostModel costs;
  costs.ObserveDecode(4, 0.002);
  const StepLatencyTarget automatic{.mode = StepLatencyTarget::Mode::kAuto};
  EXPECT_EQ(PrefillTokenCap(automatic, costs, 16), 16);
}

TEST(PrefillTokenCapTest, FollowsTheMedianNotTheLastSample) {
  StepCostModel costs;
  for (int i = 0; i < 5; ++i) costs.ObserveDecode(8, 0.002);
  costs.ObserveDecode(8, 0.5);  // one stalled step
  for (int i = 0; i < 5; ++i) costs.ObservePrefill(100, 100 * 50e-6);
  const StepLatencyTarget automatic{.mode = StepLatencyTarget::Mode::kAuto};
  EXPECT_EQ(PrefillTokenCap(automatic, costs), 80);
}

}  // namespace
}  // namespace slotserve::engine
