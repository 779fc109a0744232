// SRformer cross attention: the memory build and a run of decode steps that crosses segment
// boundaries (with requests of different source lengths batched together) on each optimised
// backend against the reference; closed forms for the reference (the segment schedule, and the
// read without RAF spikes being plain softmax over the segment).
#include "kernels/srformer_cross.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

constexpr int kHeads = 2;
constexpr int kHeadDim = 4;
constexpr int kWidth = kHeads * kHeadDim;
constexpr int kCapacity = 11;
constexpr int kSegment = 3;
constexpr int kTargetLength = 6;
constexpr int kLengthOffset = 0;
constexpr int kLayerOffset = 2;
constexpr int kSlots = 2;
const SrformerLayout kLayout = {kHeads, kHeadDim, kCapacity};
// Each test slot holds its memory block and, after it, its RAF state (the model keeps them
// apart: the memory in the request's shared cross memory, the RAF state in each beam's slot).
const int64_t kRafOffset = kLayerOffset + kLayout.memory_floats();
const int64_t kSlotStride = kRafOffset + kLayout.raf_floats();

struct SrformerRun {
  std::vector<float> outputs;  // every step's rows, one after another
  std::vector<float> pool;     // the slots after the last step
};

// Builds slot 0 from 11 source rows and slot 1 from 5, then steps both requests through
// decoder positions 0..7 (one row each, slot 1 first), with RAF weights that spike.
SrformerRun RunSrformer(Backend backend, float leak, float threshold) {
  const int lengths[kSlots] = {11, 5};
  std::vector<float> pool(kSlots * kSlotStride, 3.0f);  // garbage the build must overwrite
  for (int slot = 0; slot < kSlots; ++slot) {           // a fresh slot's RAF state is zero
    std::fill_n(pool.begin() + slot * kSlotStride + kRafOffset, kLayout.raf_floats(), 0.0f);
  }
  DeviceArray<float> pool_dev(backend, pool);
  for (int slot = 0; slot < kSlots; ++slot) {
    const int64_t in_stride = 2 * kWidth + 1;
    DeviceArray<float> source(backend,
                              RandomFloats(lengths[slot] * in_stride, 40 + slot, -1.5f, 1.5f));
    SrformerBuildParams build;
    build.layout = kLayout;
    build.positions = lengths[slot];
    build.keys = source.data();
    build.values = source.data() + kWidth;
    build.in_stride = in_stride;
    build.layer = pool_dev.data() + slot * kSlotStride + kLayerOffset;
    LaunchSrformerBuild(backend, build);
    const float length = static_cast<float>(lengths[slot]);
    CopyHostToDevice(backend, pool_dev.data() + slot * kSlotStride + kLengthOffset, &length,
                     sizeof(float));
  }
  DeviceArray<float> weight(backend, RandomFloats(kHeadDim * kHeadDim, 50, -2.0f, 2.0f));
  DeviceArray<float> bias(backend, RandomFloats(kHeadDim, 51, 0.0f, 1.0f));
  DeviceArray<int32_t> slots(backend, std::vector<int32_t>{1, 0});
  SrformerRun run;
  for (int t = 0; t < 8; ++t) {
    DeviceArray<int32_t> positions(backend, std::vector<int32_t>{t, t});
    DeviceArray<float> q(backend, RandomFloats(2 * (kWidth + 1), 60 + t));
    DeviceArray<float> out(backend, std::vector<float>(2 * kWidth, -9.0f));
    SrformerStepParams p;
    p.layout = kLayout;
    p.rows = 2;
    p.segment = kSegment;
    p.target_length = kTargetLength;
    p.length_offset = kLengthOffset;
    p.raf_state = {pool_dev.data(), kSlotStride, kRafOffset};
    p.raf_slots = slots.data();
    p.raf_weight = weight.data();
    p.raf_bias = bias.data();
    p.leak = leak;
    p.threshold = threshold;
    p.q = q.data();
    p.q_stride = kWidth + 1;
    p.out = out.data();
    p.out_stride = kWidth;
    StepTarget target;
    target.state = {pool_dev.data(), kSlotStride, kLayerOffset};
    target.slots = slots.data();
    target.positions = positions.data();
    LaunchSrformerStep(backend, p, target);
    const std::vector<float> step_out = out.Download();
    run.outputs.insert(run.outputs.end(), step_out.begin(), step_out.end());
  }
  run.pool = pool_dev.Download();
  return run;
}

class SrformerCrossTest : public ::testing::TestWithParam<BackendCase> {};

TEST_P(SrformerCrossTest, BuildAndStepsMatchTheReference) {
  SLOTSERVE_SKIP_IF_UNAVAILABLE(GetParam().backend);
  const SrformerRun got = RunSrformer(GetParam().backend, 0.6f, 0.4f);
  const SrformerRun want = RunSrformer(Backend::kReference, 0.6f, 0.4f);
  ExpectAllClose(got.outputs, want.outputs, GetParam().tolerance, "outputs");
  ExpectAllClose(got.pool, want.pool, GetParam().tolerance, "slots (memory, mem, R, segment)");
}

INSTANTIATE_TEST_SUITE_P(Backends, SrformerCrossTest, ::testing::ValuesIn(F32Cases()),
                         [](const auto& info) { return CaseName(info.param); });

TEST(SrformerCrossReferenceTest, SegmentSchedule) {
  // 11 source positions in segments of 3: m = 4; target length 6: t·4/6, capped at 3.
  const int expected[8] = {0, 0, 1, 2, 2, 3, 3, 3};
  for (int t = 0; t < 8; ++t) EXPECT_EQ(SrformerSegmentOf(t, 11, 3, 6), expected[t]) << t;
  EXPECT_EQ(SrformerSegmentOf(5, 5, 3, 6), 1);  // m = 2
}

TEST(SrformerCrossReferenceTest, TheRafSpikesAndRecordsTheSegment) {
  const SrformerRun run = RunSrformer(Backend::kReference, 0.6f, 0.4f);
  const float* raf = run.pool.data() + kRafOffset;  // slot 0, after t = 7 (segment 3)
  EXPECT_EQ(raf[kLayout.entered()], 4.0f);
  float largest_r = 0.0f;
  for (int e = 0; e < kHeads * kHeadDim * kHeadDim; ++e) {
    EXPECT_GE(raf[kLayout.raf_output() + e], 0.0f);
    largest_r = std::max(largest_r, raf[kLayout.raf_output() + e]);
  }
  EXPECT_GT(largest_r, 0.0f) << "the test's weights are meant to make the RAF fire";
}

// With a threshold no membrane reaches, R stays 0 and the output equals the reference
// AttendRows over the segment alone, so that two segments' outputs for the same slot differ
// from attention over the whole source.
TEST(SrformerCrossReferenceTest, WithoutSpikesTheReadIsSegmentSoftmax) {
  const SrformerRun run = RunSrformer(Backend::kReference, 0.0f, 1e9f);
  const float* layer = run.pool.data() + kLayerOffset;
  for (int e = 0; e < kHeads * kHeadDim * kHeadDim; ++e) {
    EXPECT_EQ(layer[kLayout.memory_floats() + kLayout.raf_output() + e], 0.0f);
  }
  // Step t = 7 of slot 0 (row 1) reads segment 3 = source position 9..10.
  const std::vector<float> q = RandomFloats(2 * (kWidth + 1), 60 + 7);
  for (int h = 0; h < kHeads; ++h) {
    double scores[2];
    double total = 0.0;
    for (int s = 0; s < 2; ++s) {
      double dot = 0.0;
      for (int c = 0; c < kHeadDim; ++c) {
        dot += q[(kWidth + 1) + h * kHeadDim + c] *
               layer[kLayout.keys() + (9 + s) * kWidth + h * kHeadDim + c];
      }
      scores[s] = std::exp(dot / std::sqrt(static_cast<double>(kHeadDim)));
      total += scores[s];
    }
    for (int c = 0; c < kHeadDim; ++c) {
      double want = 0.0;
      for (int s = 0; s < 2; ++s) {
        want += scores[s] / total * layer[kLayout.values() + (9 + s) * kWidth + h * kHeadDim + c];
      }
      EXPECT_NEAR(run.outputs[7 * 2 * kWidth + kWidth + h * kHeadDim + c], want, 1e-5) << h << c;
    }
  }
}

}  // namespace
}  // namespace slotserve::kernels::testing
