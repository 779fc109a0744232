// SwiGLU: optimised backends against the reference over shapes, strides and out == gate; silu
// within 1e-6 relative of the exact one over the whole float range of exp; hand values.
#include "kernels/swiglu.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

// gate and up interleaved in one buffer, as a fused gate/up projection writes them: gate at
// column 0, up at column `cols + 1` of each row.
std::vector<float> RunSwiGlu(Backend backend, int rows, int cols, bool in_place,
                             const std::vector<float>& inputs) {
  const int64_t in_stride = 2 * cols + 3;
  const int64_t out_stride = in_place ? in_stride : cols + 2;
  DeviceArray<float> in_dev(backend, inputs);
  DeviceArray<float> out_dev(backend, std::vector<float>(rows * out_stride, -7.0f));
  SwiGluParams p;
  p.gate = in_dev.data();
  p.up = in_dev.data() + cols + 1;
  p.in_stride = in_stride;
  p.out = in_place ? in_dev.data() : out_dev.data();
  p.out_stride = out_stride;
  p.rows = rows;
  p.cols = cols;
  LaunchSwiGlu(backend, p);
  return in_place ? in_dev.Download() : out_dev.Download();
}

class SwiGluTest : public ::testing::TestWithParam<BackendCase> {};

TEST_P(SwiGluTest, MatchesReferenceOverShapes) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  uint32_t seed = 800;
  for (int rows : {1, 4, 37}) {
    for (int cols : {1, 7, 8, 9, 64, 1000}) {
      for (bool in_place : {false, true}) {
        const auto inputs = RandomFloats(rows * (2 * cols + 3), ++seed, -8.0f, 8.0f);
        const auto want = RunSwiGlu(Backend::kReference, rows, cols, in_place, inputs);
        const auto got = RunSwiGlu(c.backend, rows, cols, in_place, inputs);
        ExpectAllClose(got, want, c.tolerance,
                       (::testing::Message()
                        << "rows=" << rows << " cols=" << cols << " in_place=" << in_place)
                           .GetString());
        if (HasFailure()) return;
      }
    }
  }
}

TEST_P(SwiGluTest, SiluIsAccurateOverTheWholeRange) {
  // up = 1, gate from -100 to 100 (past where e^-x overflows and underflows): every value
  // within 1e-6 relative of silu in double, except where |silu| < 1e-30 (there any tiny value
  // will do).
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  const int cols = 20001;
  std::vector<float> inputs(2 * cols + 3, 1.0f);
  for (int i = 0; i < cols; ++i) inputs[i] = -100.0f + 0.01f * i;
  const auto got = RunSwiGlu(c.backend, 1, cols, false, inputs);
  int bad = 0;
  for (int i = 0; i < cols; ++i) {
    const double g = inputs[i];
    const double want = g / (1.0 + std::exp(-g));
    const double error = std::abs(got[i] - want);
    if (!(error <= 1e-6 * std::abs(want) + 1e-30) && ++bad <= 5) {
      ADD_FAILURE() << "silu(" << g << ") = " << got[i] << ", want " << want;
    }
  }
  EXPECT_EQ(bad, 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, SwiGluTest, ::testing::ValuesIn(F32Cases()),
                         [](const auto& info) { return CaseName(info.param); });

TEST(SwiGluReferenceTest, KnownValues) {
  // silu(0) = 0, silu(ln 3) = 0.75 ln 3, silu(-ln 3) = -0.25 ln 3; times up.
  const float ln3 = static_cast<float>(std::log(3.0));
  const std::vector<float> gate = {0.0f, ln3, -ln3};
  const std::vector<float> up = {5.0f, 2.0f, -4.0f};
  std::vector<float> out(3, -7.0f);
  SwiGluParams p{gate.data(), up.data(), 3, out.data(), 3, 1, 3};
  LaunchSwiGlu(Backend::kReference, p);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_NEAR(out[1], 1.5 * std::log(3.0), 1e-6);
  EXPECT_NEAR(out[2], std::log(3.0), 1e-6);
}

}  // namespace
}  // namespace slotserve::kernels::testing
