// RMS norm: optimised backends against the reference over groups, strides, in place, with and
// without weight, silu input and gate; hand-computed values for the reference.
#include "kernels/rms_norm.h"

#include <cmath>
#include <vector>

#include "base/compute_threads.h"
#include "gtest/gtest.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

struct RmsNormRun {
  int rows, groups, group_dim;
  bool in_place, weighted, silu_input, gated;
  int64_t x_stride() const { return groups * group_dim + 3; }
  int64_t y_stride() const { return in_place ? x_stride() : groups * group_dim + 1; }
  int64_t gate_stride() const { return groups * group_dim + 2; }
};

std::vector<float> RunRmsNorm(Backend backend, const RmsNormRun& run, const std::vector<float>& x,
                              const std::vector<float>& weight, const std::vector<float>& gate) {
  DeviceArray<float> x_dev(backend, x);
  DeviceArray<float> y_dev(backend, std::vector<float>(run.rows * run.y_stride(), -7.0f));
  DeviceArray<float> weight_dev(backend, weight);
  DeviceArray<float> gate_dev(backend, gate);
  RmsNormParams p;
  p.x = x_dev.data();
  p.x_stride = run.x_stride();
  p.y = run.in_place ? x_dev.data() : y_dev.data();
  p.y_stride = run.y_stride();
  p.rows = run.rows;
  p.groups = run.groups;
  p.group_dim = run.group_dim;
  p.weight = run.weighted ? weight_dev.data() : nullptr;
  p.eps = 1e-6f;
  p.silu_input = run.silu_input;
  p.gate = run.gated ? gate_dev.data() : nullptr;
  p.gate_stride = run.gate_stride();
  LaunchRmsNorm(backend, p);
  return run.in_place ? x_dev.Download() : y_dev.Download();
}

class RmsNormTest : public ::testing::TestWithParam<BackendCase> {};

TEST_P(RmsNormTest, MatchesReferenceOverShapes) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  uint32_t seed = 700;
  // {1, 4100}, {2, 8200}: past the cuda backend's small and large register rows
  // (register_row.cuh).
  const std::vector<std::pair<int, int>> shapes = {{1, 1},  {1, 7},   {1, 64},   {1, 1000}, {4, 64},
                                                   {3, 33}, {8, 128}, {1, 4100}, {2, 8200}};
  for (int rows : {1, 5, 33}) {
    for (const auto& [groups, group_dim] : shapes) {
      for (int variant = 0; variant < 16; ++variant) {
        const RmsNormRun run{rows,
                             groups,
                             group_dim,
                             (variant & 1) != 0,
                             (variant & 2) != 0,
                             (variant & 4) != 0,
                             (variant & 8) != 0};
        // Rows of different scales: the norm must not depend on the scale.
        auto x = RandomFloats(rows * run.x_stride(), ++seed, -3.0f, 3.0f);
        for (int r = 0; r < rows; ++r) {
          for (int64_t i = 0; i < run.x_stride(); ++i) x[r * run.x_stride() + i] *= 1 + 10 * r;
        }
        const auto weight = RandomFloats(group_dim, ++seed, 0.5f, 1.5f);
        const auto gate = RandomFloats(rows * run.gate_stride(), ++seed, -4.0f, 4.0f);
        const auto want = RunRmsNorm(Backend::kReference, run, x, weight, gate);
        const auto got = RunRmsNorm(c.backend, run, x, weight, gate);
        ExpectAllClose(got, want, c.tolerance,
                       (::testing::Message()
                        << "rows=" << rows << " groups=" << groups << " group_dim=" << group_dim
                        << " in_place=" << run.in_place << " weighted=" << run.weighted
                        << " silu_input=" << run.silu_input << " gated=" << run.gated)
                           .GetString());
        if (HasFailure()) return;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, RmsNormTest, ::testing::ValuesIn(F32Cases()),
                         [](const auto& info) { return CaseName(info.param); });

TEST(RmsNormThreadsTest, RowsSplitOnThreeThreadsMatchReference) {
  // Large enough to be split; each thread keeps its own silu buffers.
  const RmsNormRun run{64, 4, 128, true, true, true, true};
  const auto x = RandomFloats(run.rows * run.x_stride(), 750, -3.0f, 3.0f);
  const auto weight = RandomFloats(run.group_dim, 751, 0.5f, 1.5f);
  const auto gate = RandomFloats(run.rows * run.gate_stride(), 752, -4.0f, 4.0f);
  const auto want = RunRmsNorm(Backend::kReference, run, x, weight, gate);
  base::SetComputeThreads(3);
  const auto got = RunRmsNorm(Backend::kCpu, run, x, weight, gate);
  base::SetComputeThreads(1);
  ExpectAllClose(got, want, DefaultTolerance(Backend::kCpu), "three threads");
}

RmsNormParams DenseParams(const std::vector<float>& x, std::vector<float>& y, int groups,
                          int group_dim) {
  RmsNormParams p;
  p.x = x.data();
  p.x_stride = groups * group_dim;
  p.y = y.data();
  p.y_stride = groups * group_dim;
  p.rows = static_cast<int>(x.size()) / (groups * group_dim);
  p.groups = groups;
  p.group_dim = group_dim;
  p.eps = 0.0f;
  return p;
}

TEST(RmsNormReferenceTest, ThreeFour) {
  // mean(x²) = (9 + 16) / 2 = 12.5: y = x / sqrt(12.5) * weight.
  const std::vector<float> x = {3, 4};
  const std::vector<float> weight = {2.0f, 0.5f};
  std::vector<float> y(2);
  RmsNormParams p = DenseParams(x, y, 1, 2);
  LaunchRmsNorm(Backend::kReference, p);
  EXPECT_FLOAT_EQ(y[0], 0.84852814f);  // 3 / 3.5355339
  EXPECT_FLOAT_EQ(y[1], 1.1313708f);
  p.weight = weight.data();
  LaunchRmsNorm(Backend::kReference, p);
  EXPECT_FLOAT_EQ(y[0], 1.6970563f);
  EXPECT_FLOAT_EQ(y[1], 0.56568542f);
}

TEST(RmsNormReferenceTest, GroupsAreNormalisedApartAndShareTheWeight) {
  // Groups [3, 4] and [1, 1]: rms sqrt(12.5) and 1; the weight [2, 0.5] applies to both.
  const std::vector<float> x = {3, 4, 1, 1};
  const std::vector<float> weight = {2.0f, 0.5f};
  std::vector<float> y(4);
  RmsNormParams p = DenseParams(x, y, 2, 2);
  p.weight = weight.data();
  LaunchRmsNorm(Backend::kReference, p);
  EXPECT_FLOAT_EQ(y[0], 1.6970563f);
  EXPECT_FLOAT_EQ(y[1], 0.56568542f);
  EXPECT_FLOAT_EQ(y[2], 2.0f);
  EXPECT_FLOAT_EQ(y[3], 0.5f);
}

TEST(RmsNormReferenceTest, EpsIsInsideTheSquareRoot) {
  // mean(x²) = 1, eps 3: y = 1 / sqrt(4).
  const std::vector<float> x = {1, -1};
  std::vector<float> y(2);
  RmsNormParams p = DenseParams(x, y, 1, 2);
  p.eps = 3.0f;
  LaunchRmsNorm(Backend::kReference, p);
  EXPECT_FLOAT_EQ(y[0], 0.5f);
  EXPECT_FLOAT_EQ(y[1], -0.5f);
}

TEST(RmsNormReferenceTest, SiluInput) {
  // sigmoid(±ln 3) = 3/4, 1/4: u = ln 3 * [3/4, -1/4], mean(u²) = ln²3 * 10/32, so
  // y = [0.75, -0.25] / sqrt(0.3125), whatever ln 3 is.
  const float ln3 = static_cast<float>(std::log(3.0));
  const std::vector<float> x = {ln3, -ln3};
  std::vector<float> y(2);
  RmsNormParams p = DenseParams(x, y, 1, 2);
  p.silu_input = true;
  LaunchRmsNorm(Backend::kReference, p);
  EXPECT_NEAR(y[0], 1.3416408f, 1e-6);
  EXPECT_NEAR(y[1], -0.4472136f, 1e-6);
}

TEST(RmsNormReferenceTest, GateMultipliesBySiluOfGateAfterTheNorm) {
  // Norm of [3, 4] as above; silu(0) = 0, silu(ln 3) = 0.75 ln 3 (the gate is not normalised).
  const std::vector<float> x = {3, 4};
  const std::vector<float> gate = {0.0f, static_cast<float>(std::log(3.0))};
  std::vector<float> y(2);
  RmsNormParams p = DenseParams(x, y, 1, 2);
  p.gate = gate.data();
  p.gate_stride = 2;
  LaunchRmsNorm(Backend::kReference, p);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_NEAR(y[1], 1.1313708 * 0.75 * std::log(3.0), 1e-6);
}

}  // namespace
}  // namespace slotserve::kernels::testing
