// ConvLuna's source filter: conv and maxpool windows (with taps past the end) on each
// optimised backend against the reference, and a hand-worked example for the reference.
#include "kernels/source_filter.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

struct FilterRun {
  int positions, columns, kernel, stride;
  bool maxpool;
};

std::vector<float> RunFilter(Backend backend, const FilterRun& run, const std::vector<float>& in,
                             const std::vector<float>& weight, float bias) {
  const int64_t in_stride = run.columns + 3;
  const int64_t out_stride = run.columns + 1;
  const int out_rows = FilteredRows(run.positions, run.stride);
  DeviceArray<float> in_dev(backend, in);
  DeviceArray<float> weight_dev(backend, weight);
  DeviceArray<float> bias_dev(backend, std::vector<float>{bias});
  DeviceArray<float> out_dev(backend, std::vector<float>(out_rows * out_stride, -9.0f));
  SourceFilterParams p;
  p.positions = run.positions;
  p.columns = run.columns;
  p.kernel = run.kernel;
  p.stride = run.stride;
  p.maxpool = run.maxpool;
  p.weight = weight_dev.data();
  p.bias = bias_dev.data();
  p.in = in_dev.data();
  p.in_stride = in_stride;
  p.out = out_dev.data();
  p.out_stride = out_stride;
  LaunchSourceFilter(backend, p);
  return out_dev.Download();
}

class SourceFilterTest : public ::testing::TestWithParam<BackendCase> {};

TEST_P(SourceFilterTest, MatchesTheReference) {
  SLOTSERVE_SKIP_IF_UNAVAILABLE(GetParam().backend);
  const FilterRun runs[] = {{1, 5, 3, 2, false},
                            {10, 7, 3, 2, false},
                            {10, 7, 3, 2, true},
                            {9, 200, 4, 3, true},
                            {11, 33, 2, 5, false}};
  for (const FilterRun& run : runs) {
    const std::vector<float> in = RandomFloats(run.positions * (run.columns + 3), run.positions);
    const std::vector<float> weight = RandomFloats(run.kernel, 3);
    const std::string what = std::string(run.maxpool ? "maxpool" : "conv") + " positions " +
                             std::to_string(run.positions) + " kernel " +
                             std::to_string(run.kernel) + " stride " + std::to_string(run.stride);
    ExpectAllClose(RunFilter(GetParam().backend, run, in, weight, 0.25f),
                   RunFilter(Backend::kReference, run, in, weight, 0.25f), GetParam().tolerance,
                   what);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, SourceFilterTest, ::testing::ValuesIn(F32Cases()),
                         [](const auto& info) { return CaseName(info.param); });

// Positions 0..4 of one column hold 1..5; kernel 2, stride 2: windows {0,1}, {2,3}, {4}.
TEST(SourceFilterReferenceTest, WorkedExample) {
  const FilterRun run = {5, 1, 2, 2, false};
  std::vector<float> in(5 * 4, 0.0f);
  for (int i = 0; i < 5; ++i) in[i * 4] = static_cast<float>(i + 1);
  const std::vector<float> conv = RunFilter(Backend::kReference, run, in, {10.0f, 1.0f}, 0.5f);
  EXPECT_FLOAT_EQ(conv[0 * 2], 10 * 1 + 2 + 0.5f);
  EXPECT_FLOAT_EQ(conv[1 * 2], 10 * 3 + 4 + 0.5f);
  EXPECT_FLOAT_EQ(conv[2 * 2], 10 * 5 + 0.5f);  // the tap past the end is skipped
  const std::vector<float> pooled =
      RunFilter(Backend::kReference, {5, 1, 2, 2, true}, in, {0.0f, 0.0f}, 0.0f);
  EXPECT_FLOAT_EQ(pooled[0 * 2], 2.0f);
  EXPECT_FLOAT_EQ(pooled[1 * 2], 4.0f);
  EXPECT_FLOAT_EQ(pooled[2 * 2], 5.0f);
}

}  // namespace
}  // namespace slotserve::kernels::testing
