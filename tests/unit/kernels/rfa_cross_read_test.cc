// RFA cross attention: the memory built by rfa_attention's ungated prefill from an empty state,
// read by rfa_cross_read on each optimised backend against the reference; and, on every
// backend, the read of a query equals what the prefill itself outputs for a last row carrying
// that query (the same sums, formed by the already-tested recurrent kernel).
#include "kernels/rfa_cross_read.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

constexpr int kHeads = 2;
constexpr int kHeadDim = 5;
constexpr int kWidth = kHeads * kHeadDim;
constexpr int kFeatures = 6;
constexpr int kSourceRows = 9;
constexpr int64_t kInStride = 3 * kWidth;  // q, k, v side by side

RfaParams BaseParams(bool interleave) {
  RfaParams p;
  p.heads = kHeads;
  p.head_dim = kHeadDim;
  p.features = kFeatures;
  p.feature_scale = 0.5f;
  p.eps = 0.1f;
  p.norm_eps = 1e-3f;
  p.interleave = interleave;
  p.in_stride = kInStride;
  return p;
}

struct CrossRun {
  std::vector<float> read;          // the cross read of the queries
  std::vector<float> last_prefill;  // the prefill's output row for the source's last row
  std::vector<float> memory;
};

// Builds the memory of slot 1 of 2 from kSourceRows rows whose last row's q is the query
// `queries[0]`, then reads rows {queries[0], queries[1]} from slot 1.
CrossRun RunCross(Backend backend, bool interleave) {
  const int64_t slot_floats = RfaStateFloatsPerLayer(kHeads, kHeadDim, kFeatures) + 3;
  DeviceArray<float> pool(backend, std::vector<float>(2 * slot_floats, 0.0f));
  DeviceArray<float> projection(backend, RandomFloats(kHeads * kFeatures * kHeadDim, 70));
  std::vector<float> source = RandomFloats(kSourceRows * kInStride, 71, -2.0f, 2.0f);
  const std::vector<float> queries = RandomFloats(2 * kWidth, 72, -2.0f, 2.0f);
  for (int c = 0; c < kWidth; ++c) source[(kSourceRows - 1) * kInStride + c] = queries[c];
  DeviceArray<float> source_dev(backend, source);
  DeviceArray<float> prefill_out(backend, std::vector<float>(kSourceRows * kWidth, 0.0f));
  RfaParams build = BaseParams(interleave);
  build.rows = kSourceRows;
  build.q = source_dev.data();
  build.k = source_dev.data() + kWidth;
  build.v = source_dev.data() + 2 * kWidth;
  build.projection = projection.data();
  build.out = prefill_out.data();
  build.out_stride = kWidth;
  PrefillTarget prefill_target;
  prefill_target.state = {pool.data(), slot_floats, 2};
  prefill_target.slot = 1;
  LaunchRfaPrefill(backend, build, prefill_target);

  DeviceArray<float> queries_dev(backend, queries);
  DeviceArray<float> read_out(backend, std::vector<float>(2 * kWidth, -9.0f));
  DeviceArray<int32_t> slots(backend, std::vector<int32_t>{1, 1});
  RfaParams read = BaseParams(interleave);
  read.rows = 2;
  read.q = queries_dev.data();
  read.in_stride = kWidth;
  read.projection = projection.data();
  read.out = read_out.data();
  read.out_stride = kWidth;
  StepTarget target;
  target.state = prefill_target.state;
  target.slots = slots.data();
  const std::vector<float> memory_before = pool.Download();
  LaunchRfaCrossRead(backend, read, target);
  CrossRun run;
  run.read = read_out.Download();
  const std::vector<float> all_prefill = prefill_out.Download();
  run.last_prefill.assign(all_prefill.end() - kWidth, all_prefill.end());
  run.memory = pool.Download();
  EXPECT_EQ(run.memory, memory_before) << "the read must leave the memory as it was";
  return run;
}

class RfaCrossReadTest : public ::testing::TestWithParam<BackendCase> {};

TEST_P(RfaCrossReadTest, MatchesTheReference) {
  SLOTSERVE_SKIP_IF_UNAVAILABLE(GetParam().backend);
  for (bool interleave : {false, true}) {
    const CrossRun got = RunCross(GetParam().backend, interleave);
    const CrossRun want = RunCross(Backend::kReference, interleave);
    const std::string layout = interleave ? "interleave" : "concat";
    ExpectAllClose(got.read, want.read, GetParam().tolerance, "read, " + layout);
    ExpectAllClose(got.memory, want.memory, GetParam().tolerance, "memory, " + layout);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, RfaCrossReadTest, ::testing::ValuesIn(F32Cases()),
                         [](const auto& info) { return CaseName(info.param); });

TEST(RfaCrossReadAllBackendsTest, ReadEqualsThePrefillsLastOutput) {
  for (Backend backend : AllBackends()) {
    SLOTSERVE_SKIP_IF_UNAVAILABLE(backend);
    const CrossRun run = RunCross(backend, false);
    const std::vector<float> first_read(run.read.begin(), run.read.begin() + kWidth);
    ExpectAllClose(first_read, run.last_prefill, 1e-5f, BackendName(backend));
  }
}

}  // namespace
}  // namespace slotserve::kernels::testing
