// Sinusoidal positions: optimised backends against the reference (large positions, strides),
// and the fairseq layout written out for dim 4 for the reference.
#include "kernels/positions.h"

#include <cmath>
#include <vector>

#include "base/compute_threads.h"
#include "gtest/gtest.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

std::vector<float> RunAddPositions(Backend backend, int dim, int64_t stride,
                                   const std::vector<int32_t>& positions,
                                   const std::vector<float>& x) {
  DeviceArray<float> x_dev(backend, x);
  DeviceArray<int32_t> positions_dev(backend, positions);
  AddPositionsParams p;
  p.x = x_dev.data();
  p.stride = stride;
  p.positions = positions_dev.data();
  p.rows = static_cast<int>(positions.size());
  p.dim = dim;
  LaunchAddPositions(backend, p);
  return x_dev.Download();
}

class AddPositionsTest : public ::testing::TestWithParam<BackendCase> {};

TEST_P(AddPositionsTest, MatchesReferenceOverShapes) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  uint32_t seed = 400;
  for (int dim : {4, 6, 64, 256}) {
    for (int rows : {1, 7, 50}) {
      const int64_t stride = dim + 3;
      auto positions = RandomInts(rows, ++seed, 0, 8000);
      positions[0] = 0;
      const auto x = RandomFloats(rows * stride, ++seed);
      const auto want = RunAddPositions(Backend::kReference, dim, stride, positions, x);
      const auto got = RunAddPositions(c.backend, dim, stride, positions, x);
      ExpectAllClose(got, want, c.tolerance,
                     (::testing::Message() << "dim=" << dim << " rows=" << rows).GetString());
      if (HasFailure()) return;
    }
  }
}

// On two compute threads the cpu backend splits the rows (kernels/cpu/positions.cc) at shapes
// large enough to be split: each row is computed whole, so the result is the one thread's, bit
// for bit, and the reference's within tolerance.
TEST_P(AddPositionsTest, TwoComputeThreadsGiveOneThreadsBits) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  constexpr int kDim = 256;
  constexpr int kRows = 64;
  const int64_t stride = kDim + 5;
  const auto positions = RandomInts(kRows, 431, 0, 8000);
  const auto x = RandomFloats(kRows * stride, 432);
  const auto one = RunAddPositions(c.backend, kDim, stride, positions, x);
  base::SetComputeThreads(2);
  const auto two = RunAddPositions(c.backend, kDim, stride, positions, x);
  base::SetComputeThreads(1);
  EXPECT_EQ(two, one);
  ExpectAllClose(two, RunAddPositions(Backend::kReference, kDim, stride, positions, x), c.tolerance,
                 "two threads");
}

INSTANTIATE_TEST_SUITE_P(Backends, AddPositionsTest, ::testing::ValuesIn(F32Cases()),
                         [](const auto& info) { return CaseName(info.param); });

TEST(AddPositionsReferenceTest, FairseqLayoutForDimFour) {
  // half = 2: f_0 = 1, f_1 = exp(-ln(10000) / 1) = 1e-4; pos(p) = [sin p, sin 1e-4 p, cos p,
  // cos 1e-4 p], added to x.
  const std::vector<int32_t> positions = {0, 3};
  std::vector<float> x = {1, 1, 1, 1, 0, 0, 0, 0};
  AddPositionsParams p{x.data(), 4, positions.data(), 2, 4};
  LaunchAddPositions(Backend::kReference, p);
  EXPECT_FLOAT_EQ(x[0], 1.0f);
  EXPECT_FLOAT_EQ(x[1], 1.0f);
  EXPECT_FLOAT_EQ(x[2], 2.0f);
  EXPECT_FLOAT_EQ(x[3], 2.0f);
  EXPECT_FLOAT_EQ(x[4], static_cast<float>(std::sin(3.0)));
  EXPECT_FLOAT_EQ(x[5], static_cast<float>(std::sin(3e-4)));
  EXPECT_FLOAT_EQ(x[6], static_cast<float>(std::cos(3.0)));
  EXPECT_FLOAT_EQ(x[7], static_cast<float>(std::cos(3e-4)));
}

}  // namespace
}  // namespace slotserve::kernels::testing
