// Layer norm: optimised backends against the reference (odd widths, strides, in place, rows
// with a large common offset); a known vector for the reference.
#include "kernels/layer_norm.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

struct LayerNormRun {
  int rows, dim;
  int64_t x_stride, y_stride;
  bool in_place;
  float offset;  // added to every x: layer norm must be shift-invariant without losing digits
};

std::vector<float> RunLayerNorm(Backend backend, const LayerNormRun& run,
                                const std::vector<float>& x, const std::vector<float>& gamma,
                                const std::vector<float>& beta) {
  DeviceArray<float> x_dev(backend, x);
  DeviceArray<float> y_dev(backend, std::vector<float>(run.rows * run.y_stride, -7.0f));
  DeviceArray<float> gamma_dev(backend, gamma);
  DeviceArray<float> beta_dev(backend, beta);
  LayerNormParams p;
  p.x = x_dev.data();
  p.x_stride = run.x_stride;
  p.gamma = gamma_dev.data();
  p.beta = beta_dev.data();
  p.y = run.in_place ? x_dev.data() : y_dev.data();
  p.y_stride = run.in_place ? run.x_stride : run.y_stride;
  p.rows = run.rows;
  p.dim = run.dim;
  p.eps = 1e-5f;
  LaunchLayerNorm(backend, p);
  return run.in_place ? x_dev.Download() : y_dev.Download();
}

class LayerNormTest : public ::testing::TestWithParam<BackendCase> {};

TEST_P(LayerNormTest, MatchesReferenceOverShapes) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  uint32_t seed = 100;
  for (int rows : {1, 2, 9, 40}) {
    // 4100 and 8200: past the cuda backend's small and large register rows (register_row.cuh).
    for (int dim : {1, 3, 64, 257, 1024, 4100, 8200}) {
      for (bool in_place : {false, true}) {
        for (float offset : {0.0f, 50.0f}) {
          const LayerNormRun run{rows, dim, dim + 5, dim + 1, in_place, offset};
          auto x = RandomFloats(rows * run.x_stride, ++seed, -2.0f, 2.0f);
          for (float& v : x) v += offset;
          const auto gamma = RandomFloats(dim, ++seed, 0.5f, 1.5f);
          const auto beta = RandomFloats(dim, ++seed);
          const auto want = RunLayerNorm(Backend::kReference, run, x, gamma, beta);
          const auto got = RunLayerNorm(c.backend, run, x, gamma, beta);
          ExpectAllClose(got, want, c.tolerance * (offset > 0 ? 10.0f : 1.0f),
                         (::testing::Message() << "rows=" << rows << " dim=" << dim
                                               << " in_place=" << in_place << " offset=" << offset)
                             .GetString());
          if (HasFailure()) return;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, LayerNormTest, ::testing::ValuesIn(F32Cases()),
                         [](const auto& info) { return CaseName(info.param); });

TEST(LayerNormReferenceTest, KnownVector) {
  // mean 2.5, biased variance 1.25: y = (x - 2.5) / sqrt(1.25) * gamma + beta
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<float> gamma = {1, 1, 2, 1};
  const std::vector<float> beta = {0, 0, 0, 10};
  std::vector<float> y(4);
  LayerNormParams p;
  p.x = x.data();
  p.x_stride = 4;
  p.gamma = gamma.data();
  p.beta = beta.data();
  p.y = y.data();
  p.y_stride = 4;
  p.rows = 1;
  p.dim = 4;
  p.eps = 0.0f;
  LaunchLayerNorm(Backend::kReference, p);
  const double s = std::sqrt(1.25);
  EXPECT_FLOAT_EQ(y[0], static_cast<float>(-1.5 / s));
  EXPECT_FLOAT_EQ(y[1], static_cast<float>(-0.5 / s));
  EXPECT_FLOAT_EQ(y[2], static_cast<float>(2 * 0.5 / s));
  EXPECT_FLOAT_EQ(y[3], static_cast<float>(1.5 / s + 10));
}

TEST(LayerNormReferenceTest, EpsIsInsideTheSquareRoot) {
  // A constant row has zero variance: y = 0 / sqrt(eps) * gamma + beta = beta.
  const std::vector<float> x = {3, 3};
  const std::vector<float> gamma = {1, 1};
  const std::vector<float> beta = {0.25f, -0.5f};
  std::vector<float> y(2);
  LayerNormParams p{x.data(), 2, gamma.data(), beta.data(), y.data(), 2, 1, 2, 1e-5f};
  LaunchLayerNorm(Backend::kReference, p);
  EXPECT_EQ(y, beta);
}

}  // namespace
}  // namespace slotserve::kernels::testing
