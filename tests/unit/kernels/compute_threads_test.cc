// The cpu kernels the compute threads split (kernels/cpu/parallel_for.h): on two threads a
// decode step of every self-attention kind gives bitwise the outputs and states of one
// thread (each (row, head) pair is computed whole by one thread), at shapes large enough to be
// split, starting from a state several tokens in; the cross-memory read and the encoder's
// attention likewise.
#include <vector>

#include "base/compute_threads.h"
#include "gtest/gtest.h"
#include "kernels/abc_attention.h"
#include "kernels/bidirectional_attention.h"
#include "kernels/luna_attention.h"
#include "kernels/memory_attention.h"
#include "kernels/rfa_attention.h"
#include "kernels/softmax_attention.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

constexpr int kRows = 16;
constexpr int kHeads = 4;
constexpr int kHeadDim = 64;
constexpr int kWidth = kHeads * kHeadDim;
constexpr int kSteps = 3;

struct StepResult {
  std::vector<float> outputs;
  std::vector<float> states;
  bool operator==(const StepResult&) const = default;
};

// `kSteps` decode steps over kRows slots (in reverse order) on `threads` compute threads:
// launch(step, target, out) runs one with the step's positions filled in by `position_of`.
template <typename Launch>
StepResult RunSteps(int threads, int64_t state_stride, int (*position_of)(int step, int row),
                    Launch launch) {
  StepResult result;
  result.states.assign(kRows * state_stride, 0.0f);
  std::vector<int32_t> slots(kRows), positions(kRows);
  for (int r = 0; r < kRows; ++r) slots[r] = kRows - 1 - r;
  base::SetComputeThreads(threads);
  for (int step = 0; step < kSteps; ++step) {
    for (int r = 0; r < kRows; ++r) positions[r] = position_of(step, r);
    std::vector<float> out(kRows * kWidth);
    launch(step,
           StepTarget{{result.states.data(), state_stride, 0}, slots.data(), positions.data()},
           out.data());
    result.outputs.insert(result.outputs.end(), out.begin(), out.end());
  }
  base::SetComputeThreads(1);
  return result;
}

StepResult AbcSteps(int threads) {
  constexpr int kMemoryRows = 32;
  constexpr int kStride = 3 * kWidth + kHeads * kMemoryRows;
  return RunSteps(
      threads, AbcStateFloatsPerLayer(kHeads, kHeadDim, kMemoryRows),
      [](int step, int) { return step; },
      [&](int step, const StepTarget& target, float* out) {
        const std::vector<float> inputs = RandomFloats(kRows * kStride, 300 + step, -1.0f, 1.0f);
        AbcParams p;
        p.rows = kRows;
        p.heads = kHeads;
        p.head_dim = kHeadDim;
        p.memory_rows = kMemoryRows;
        p.in_stride = kStride;
        p.q = inputs.data();
        p.k = inputs.data() + kWidth;
        p.v = inputs.data() + 2 * kWidth;
        p.memory_logits = inputs.data() + 3 * kWidth;
        p.out = out;
        p.out_stride = kWidth;
        LaunchAbcStep(Backend::kCpu, p, target);
      });
}

StepResult SoftmaxSteps(int threads) {
  constexpr int kContext = 64;
  return RunSteps(
      threads, SoftmaxStateFloatsPerLayer(kHeads, kHeadDim, kContext),
      // Rows at different positions: row r is step * kRows + r tokens in.
      [](int step, int row) { return step * kRows + row; },
      [&](int step, const StepTarget& target, float* out) {
        const std::vector<float> inputs = RandomFloats(kRows * 3 * kWidth, 400 + step, -1.0f, 1.0f);
        SoftmaxAttentionParams p;
        p.rows = kRows;
        p.heads = kHeads;
        p.head_dim = kHeadDim;
        p.max_context = kContext;
        p.in_stride = 3 * kWidth;
        p.q = inputs.data();
        p.k = inputs.data() + kWidth;
        p.v = inputs.data() + 2 * kWidth;
        p.out = out;
        p.out_stride = kWidth;
        LaunchSoftmaxAttentionStep(Backend::kCpu, p, target);
      });
}

StepResult RfaSteps(int threads) {
  constexpr int kFeatures = 32;
  const std::vector<float> projection =
      RandomFloats(kHeads * kFeatures * kHeadDim, 500, -0.2f, 0.2f);
  return RunSteps(
      threads, RfaStateFloatsPerLayer(kHeads, kHeadDim, kFeatures),
      [](int step, int) { return step; },
      [&](int step, const StepTarget& target, float* out) {
        const std::vector<float> inputs = RandomFloats(kRows * 3 * kWidth, 600 + step, -1.0f, 1.0f);
        RfaParams p;
        p.rows = kRows;
        p.heads = kHeads;
        p.head_dim = kHeadDim;
        p.features = kFeatures;
        p.in_stride = 3 * kWidth;
        p.q = inputs.data();
        p.k = inputs.data() + kWidth;
        p.v = inputs.data() + 2 * kWidth;
        p.projection = projection.data();
        p.out = out;
        p.out_stride = kWidth;
        LaunchRfaStep(Backend::kCpu, p, target);
      });
}

StepResult LunaSteps(int threads) {
  constexpr int kLength = 32;
  const std::vector<float> pq = RandomFloats(kLength * kWidth, 700, -0.2f, 0.2f);
  return RunSteps(
      threads, LunaStateFloatsPerLayer(kHeads, kHeadDim, kLength),
      [](int step, int) { return step; },
      [&](int step, const StepTarget& target, float* out) {
        const std::vector<float> inputs = RandomFloats(kRows * 4 * kWidth, 800 + step, -1.0f, 1.0f);
        LunaParams p;
        p.rows = kRows;
        p.heads = kHeads;
        p.head_dim = kHeadDim;
        p.length = kLength;
        p.in_stride = 4 * kWidth;
        p.q = inputs.data();
        p.k = inputs.data() + kWidth;
        p.v = inputs.data() + 2 * kWidth;
        p.pc = inputs.data() + 3 * kWidth;
        p.pq = pq.data();
        p.out = out;
        p.out_stride = kWidth;
        LaunchLunaStep(Backend::kCpu, p, target);
      });
}

TEST(ComputeThreadsTest, AbcStepOnTwoThreadsEqualsOneThread) {
  const StepResult one = AbcSteps(1);
  const StepResult two = AbcSteps(2);
  EXPECT_TRUE(one == two);
}

TEST(ComputeThreadsTest, SoftmaxStepOnTwoThreadsEqualsOneThread) {
  const StepResult one = SoftmaxSteps(1);
  const StepResult two = SoftmaxSteps(2);
  EXPECT_TRUE(one == two);
}

TEST(ComputeThreadsTest, RfaStepOnTwoThreadsEqualsOneThread) {
  const StepResult one = RfaSteps(1);
  const StepResult two = RfaSteps(2);
  EXPECT_TRUE(one == two);
}

TEST(ComputeThreadsTest, LunaStepOnTwoThreadsEqualsOneThread) {
  const StepResult one = LunaSteps(1);
  const StepResult two = LunaSteps(2);
  EXPECT_TRUE(one == two);
}

// The cross-memory read (encoder–decoder) of rows whose memories hold different lengths.
std::vector<float> MemoryReads(int threads) {
  constexpr int kCapacity = 48;
  const int64_t stride = 1 + MemoryAttentionFloatsPerLayer(kHeads, kHeadDim, kCapacity);
  std::vector<float> memory = RandomFloats(kRows * stride, 900, -1.0f, 1.0f);
  for (int r = 0; r < kRows; ++r) memory[r * stride] = static_cast<float>(1 + (r * 7) % kCapacity);
  std::vector<int32_t> slots(kRows);
  for (int r = 0; r < kRows; ++r) slots[r] = kRows - 1 - r;
  const std::vector<float> q = RandomFloats(kRows * kWidth, 901, -1.0f, 1.0f);
  std::vector<float> out(kRows * kWidth);
  MemoryAttentionParams p;
  p.rows = kRows;
  p.heads = kHeads;
  p.head_dim = kHeadDim;
  p.capacity = kCapacity;
  p.length_offset = 0;
  p.q = q.data();
  p.q_stride = kWidth;
  p.out = out.data();
  p.out_stride = kWidth;
  base::SetComputeThreads(threads);
  LaunchMemoryAttention(Backend::kCpu, p,
                        StepTarget{{memory.data(), stride, 1}, slots.data(), nullptr});
  base::SetComputeThreads(1);
  return out;
}

TEST(ComputeThreadsTest, CrossMemoryReadOnTwoThreadsEqualsOneThread) {
  EXPECT_EQ(MemoryReads(1), MemoryReads(2));
}

// The encoder's bidirectional attention over one 96-token source: heads split between threads.
std::vector<float> EncoderAttention(int threads) {
  constexpr int kSource = 96;
  const std::vector<float> qkv = RandomFloats(kSource * 3 * kWidth, 950, -1.0f, 1.0f);
  std::vector<float> out(kSource * kWidth);
  BidirectionalAttentionParams p;
  p.rows = kSource;
  p.heads = kHeads;
  p.head_dim = kHeadDim;
  p.q = qkv.data();
  p.k = qkv.data() + kWidth;
  p.v = qkv.data() + 2 * kWidth;
  p.in_stride = 3 * kWidth;
  p.out = out.data();
  p.out_stride = kWidth;
  base::SetComputeThreads(threads);
  LaunchBidirectionalAttention(Backend::kCpu, p);
  base::SetComputeThreads(1);
  return out;
}

TEST(ComputeThreadsTest, EncoderAttentionOnTwoThreadsEqualsOneThread) {
  const std::vector<float> one = EncoderAttention(1);
  EXPECT_EQ(one, EncoderAttention(2));
  EXPECT_NE(one, std::vector<float>(one.size(), 0.0f));
}

}  // namespace
}  // namespace slotserve::kernels::testing
