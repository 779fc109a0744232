// Rotary embedding: optimised backends against the reference (large positions, several heads,
// strides, columns past the heads untouched); hand values for the reference: position 0 is the
// identity, a quarter and a half turn, and base 10000's first two frequencies.
#include "kernels/rotary.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::vector<float> RunRotary(Backend backend, int heads, int head_dim, int64_t stride, float base,
                             const std::vector<int32_t>& positions, const std::vector<float>& x) {
  DeviceArray<float> x_dev(backend, x);
  DeviceArray<int32_t> positions_dev(backend, positions);
  RotaryParams p;
  p.x = x_dev.data();
  p.stride = stride;
  p.rows = static_cast<int>(positions.size());
  p.heads = heads;
  p.head_dim = head_dim;
  p.positions = positions_dev.data();
  p.base = base;
  LaunchRotary(backend, p);
  return x_dev.Download();
}

class RotaryTest : public ::testing::TestWithParam<BackendCase> {};

TEST_P(RotaryTest, MatchesReferenceOverShapes) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  uint32_t seed = 900;
  for (int head_dim : {2, 4, 64, 128}) {
    for (int heads : {1, 3}) {
      for (int rows : {1, 7, 40}) {
        for (float base : {10000.0f, 500000.0f}) {
          // Five columns past the heads: they must come back untouched.
          const int64_t stride = heads * head_dim + 5;
          auto positions = RandomInts(rows, ++seed, 0, 100000);
          positions[0] = 0;
          const auto x = RandomFloats(rows * stride, ++seed, -2.0f, 2.0f);
          const auto want =
              RunRotary(Backend::kReference, heads, head_dim, stride, base, positions, x);
          const auto got = RunRotary(c.backend, heads, head_dim, stride, base, positions, x);
          ExpectAllClose(got, want, c.tolerance,
                         (::testing::Message() << "head_dim=" << head_dim << " heads=" << heads
                                               << " rows=" << rows << " base=" << base)
                             .GetString());
          if (HasFailure()) return;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, RotaryTest, ::testing::ValuesIn(F32Cases()),
                         [](const auto& info) { return CaseName(info.param); });

TEST(RotaryReferenceTest, PositionZeroIsTheIdentity) {
  const std::vector<float> x = RandomFloats(2 * 8 + 1, 901);
  std::vector<float> y = x;
  const std::vector<int32_t> positions = {0};
  RotaryParams p{y.data(), 17, 1, 2, 8, positions.data(), 10000.0f};
  LaunchRotary(Backend::kReference, p);
  EXPECT_EQ(y, x);
}

TEST(RotaryReferenceTest, QuarterAndHalfTurns) {
  // head_dim 4, base 4/π²: theta_0 = 1, theta_1 = base^(-1/2) = π/2. Pairs (x0, x2) and
  // (x1, x3). Position 1 turns the second pair by 90°: (x1, x3) -> (-x3, x1); position 2 by
  // 180°: -> (-x1, -x3). Two heads per row, both turned alike.
  const float base = static_cast<float>(4.0 / (kPi * kPi));
  const std::vector<int32_t> positions = {1, 2};
  std::vector<float> x = {1, 2, 3, 4, -1, 5,  0.5f, 7,    // position 1
                          1, 2, 3, 4, 10, 20, 30,   40};  // position 2
  RotaryParams p{x.data(), 8, 2, 2, 4, positions.data(), base};
  LaunchRotary(Backend::kReference, p);
  const double c1 = std::cos(1.0), s1 = std::sin(1.0), c2 = std::cos(2.0), s2 = std::sin(2.0);
  const std::vector<double> want = {
      1 * c1 - 3 * s1,    -4,  3 * c1 + 1 * s1,   2,   // head 0, position 1
      -1 * c1 - 0.5 * s1, -7,  0.5 * c1 - 1 * s1, 5,   // head 1, position 1
      1 * c2 - 3 * s2,    -2,  3 * c2 + 1 * s2,   -4,  // head 0, position 2
      10 * c2 - 30 * s2,  -20, 30 * c2 + 10 * s2, -40};
  // 1e-5: base is 4/π² rounded to float, so the half turn is off by ~1e-7 rad.
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(x[i], want[i], 1e-5) << "[" << i << "]";
}

TEST(RotaryReferenceTest, BaseTenThousandHalvesNotPairs) {
  // head_dim 4, base 10000: theta = [1, 10000^(-1/2) = 0.01]; position 3 turns (x0, x2) by 3
  // and (x1, x3) by 0.03. Interleaved pairs (x0, x1) would give other numbers.
  const std::vector<int32_t> positions = {3};
  std::vector<float> x = {1, 2, 3, 4};
  RotaryParams p{x.data(), 4, 1, 1, 4, positions.data(), 10000.0f};
  LaunchRotary(Backend::kReference, p);
  EXPECT_FLOAT_EQ(x[0], static_cast<float>(1 * std::cos(3.0) - 3 * std::sin(3.0)));
  EXPECT_FLOAT_EQ(x[1], static_cast<float>(2 * std::cos(0.03) - 4 * std::sin(0.03)));
  EXPECT_FLOAT_EQ(x[2], static_cast<float>(3 * std::cos(3.0) + 1 * std::sin(3.0)));
  EXPECT_FLOAT_EQ(x[3], static_cast<float>(4 * std::cos(0.03) + 2 * std::sin(0.03)));
}

}  // namespace
}  // namespace slotserve::kernels::testing
