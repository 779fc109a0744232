// The capture failure trap (kernels/capture_failure_trap.h) on the host: while installed, a
// failure is recorded and reported as a status; without it the caller is told to abort.
#include "kernels/capture_failure_trap.h"

#include <gtest/gtest.h>

#include <thread>

namespace slotserve::kernels {
namespace {

TEST(CaptureFailureTrapTest, WithoutATrapAFailureIsNotTaken) {
  EXPECT_FALSE(CaptureFailureTrap::Record("cudaMemcpyAsync returned an error"));
}

TEST(CaptureFailureTrapTest, KeepsTheFirstFailureAndCountsTheRest) {
  CaptureFailureTrap trap;
  EXPECT_TRUE(trap.status().ok());
  EXPECT_TRUE(CaptureFailureTrap::Record("first"));
  EXPECT_EQ(trap.status(), absl::InternalError("first"));
  EXPECT_TRUE(CaptureFailureTrap::Record("second"));
  EXPECT_TRUE(CaptureFailureTrap::Record("third"));
  EXPECT_EQ(trap.status(), absl::InternalError("first (and 2 more after it)"));
}

TEST(CaptureFailureTrapTest, AnInnerTrapShadowsTheOuterUntilItEnds) {
  CaptureFailureTrap outer;
  {
    CaptureFailureTrap inner;
    EXPECT_TRUE(CaptureFailureTrap::Record("inner"));
    EXPECT_FALSE(inner.status().ok());
  }
  EXPECT_TRUE(outer.status().ok());
  EXPECT_TRUE(CaptureFailureTrap::Record("outer"));
  EXPECT_EQ(outer.status(), absl::InternalError("outer"));
}

TEST(CaptureFailureTrapTest, IsPerThread) {
  CaptureFailureTrap trap;
  bool taken_elsewhere = true;
  std::thread([&] { taken_elsewhere = CaptureFailureTrap::Record("other thread"); }).join();
  EXPECT_FALSE(taken_elsewhere) << "another thread's failure must abort there, not land here";
  EXPECT_TRUE(trap.status().ok());
}

TEST(CaptureFailureTrapTest, EndsWithItsScope) {
  { CaptureFailureTrap trap; }
  EXPECT_FALSE(CaptureFailureTrap::Record("after the trap"));
}

}  // namespace
}  // namespace slotserve::kernels
