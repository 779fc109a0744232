// Activations: optimised backends against the reference over strided inputs, and GELU values
// from the erf closed form for the reference.
#include "kernels/activation.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/fast_erf.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

std::vector<float> RunActivation(Backend backend, Activation activation, int rows, int cols,
                                 int64_t stride, const std::vector<float>& x) {
  DeviceArray<float> x_dev(backend, x);
  ActivationParams p;
  p.x = x_dev.data();
  p.stride = stride;
  p.rows = rows;
  p.cols = cols;
  p.activation = activation;
  LaunchActivation(backend, p);
  return x_dev.Download();
}

class ActivationTest : public ::testing::TestWithParam<BackendCase> {};

TEST_P(ActivationTest, MatchesReferenceOverShapes) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  uint32_t seed = 200;
  for (Activation activation : {Activation::kGelu, Activation::kRelu}) {
    for (int rows : {1, 4, 33}) {
      for (int cols : {1, 7, 256, 1031}) {
        const int64_t stride = cols + 4;  // the padding must stay untouched
        const auto x = RandomFloats(rows * stride, ++seed, -6.0f, 6.0f);
        const auto want = RunActivation(Backend::kReference, activation, rows, cols, stride, x);
        const auto got = RunActivation(c.backend, activation, rows, cols, stride, x);
        ExpectAllClose(got, want, c.tolerance,
                       (::testing::Message() << "activation=" << static_cast<int>(activation)
                                             << " rows=" << rows << " cols=" << cols)
                           .GetString());
        if (HasFailure()) return;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ActivationTest, ::testing::ValuesIn(F32Cases()),
                         [](const auto& info) { return CaseName(info.param); });

TEST(ActivationReferenceTest, GeluMatchesErfClosedForm) {
  // 0.5 u (1 + erf(u / sqrt 2)) = u * Phi(u), Phi the standard normal CDF.
  std::vector<float> x = {0.0f, 1.0f, -1.0f, 2.0f, -3.0f};
  const std::vector<float> want = {0.0f, 0.8413447460685429f, -0.15865525393145707f,
                                   1.9544997361036416f, -0.00404969409489031f};
  ActivationParams p{x.data(), 5, 1, 5, Activation::kGelu};
  LaunchActivation(Backend::kReference, p);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(x[i], want[i], 1e-7) << "index " << i;
}

// The cpu GELU's vectorised erf (kernels/cpu/fast_erf.h) against std::erf in double over
// [-10, 10] in steps of 1e-4 (both tails, where it clamps, included; an odd count, so the
// array form's tail runs too).
TEST(FastErfTest, StaysWithin5e7OfStdErf) {
  std::vector<float> x;
  for (int i = -100000; i <= 100000; ++i) x.push_back(static_cast<float>(i) * 1e-4f);
  std::vector<float> y(x.size());
  cpu::FastErf(x.data(), y.data(), static_cast<int>(x.size()));
  double worst = 0.0;
  float worst_at = 0.0f;
  for (size_t i = 0; i < x.size(); ++i) {
    const double error = std::abs(y[i] - std::erf(static_cast<double>(x[i])));
    if (error > worst) {
      worst = error;
      worst_at = x[i];
    }
  }
  EXPECT_LT(worst, 5e-7) << "at x = " << worst_at;
}

TEST(ActivationReferenceTest, ReluClampsNegatives) {
  std::vector<float> x = {-2.0f, 0.0f, 3.5f, -0.0f};
  ActivationParams p{x.data(), 4, 1, 4, Activation::kRelu};
  LaunchActivation(Backend::kReference, p);
  EXPECT_EQ(x, (std::vector<float>{0.0f, 0.0f, 3.5f, 0.0f}));
}

}  // namespace
}  // namespace slotserve::kernels::testing
