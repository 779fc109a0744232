// StepGraphCache: host backends run the recorded work every time; cuda captures it once per
// key and replays it, reading fresh inputs from the same buffers, until invalidated.
#include "kernels/step_graph_cache.h"

#include <vector>

#include "gtest/gtest.h"
#include "kernels/activation.h"
#include "kernels/device_stream.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"

namespace slotserve::kernels::testing {
namespace {

class StepGraphCacheTest : public ::testing::TestWithParam<Backend> {};

TEST_P(StepGraphCacheTest, ReplaysWithFreshInputsAndRecordsOncePerKey) {
  const Backend backend = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(backend);
  absl::StatusOr<DeviceStream> stream = DeviceStream::Create(backend);
  ASSERT_TRUE(stream.ok()) << stream.status();
  DeviceArray<float> x(backend, 4);
  int records = 0;
  auto relu = [&](Stream s) {
    ++records;
    ActivationParams p;
    p.x = x.data();
    p.stride = 4;
    p.rows = 1;
    p.cols = 4;
    p.activation = Activation::kRelu;
    LaunchActivation(backend, p, s);
  };
  StepGraphCache cache(backend);
  const std::vector<std::vector<float>> inputs = {
      {-1.0f, 2.0f, -3.0f, 4.0f}, {5.0f, -6.0f, 7.0f, -8.0f}, {-0.5f, -0.25f, 0.25f, 0.5f}};
  for (const std::vector<float>& input : inputs) {
    x.Upload(input);
    Synchronize(backend);
    ASSERT_TRUE(cache.Run(/*key=*/1, stream->get(), relu).ok());
    Synchronize(backend, stream->get());
    std::vector<float> want = input;
    for (float& v : want) v = v > 0.0f ? v : 0.0f;
    EXPECT_EQ(x.Download(), want);
  }
  const bool graphs = backend == Backend::kCuda;
  EXPECT_EQ(records, graphs ? 1 : 3);
  EXPECT_EQ(cache.Contains(1), graphs);

  ASSERT_TRUE(cache.Run(/*key=*/2, stream->get(), relu).ok());
  EXPECT_EQ(records, graphs ? 2 : 4);
  EXPECT_EQ(cache.size(), graphs ? 2u : 0u);
  cache.Invalidate();
  EXPECT_EQ(cache.size(), 0u);
  ASSERT_TRUE(cache.Run(/*key=*/1, stream->get(), relu).ok());
  EXPECT_EQ(records, graphs ? 3 : 5);
  Synchronize(backend, stream->get());
}

INSTANTIATE_TEST_SUITE_P(Backends, StepGraphCacheTest, ::testing::ValuesIn(AllBackends()),
                         [](const auto& info) { return std::string(BackendName(info.param)); });

TEST(StepGraphCacheCudaTest, RefusesTheNullStream) {
  if (!CudaCompiledIn()) GTEST_SKIP() << "no CUDA backend in this build";
  SLOTSERVE_SKIP_IF_UNAVAILABLE(Backend::kCuda);
  StepGraphCache cache(Backend::kCuda);
  const absl::Status status = cache.Run(1, nullptr, [](Stream) {});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_FALSE(cache.Contains(1));
}

}  // namespace
}  // namespace slotserve::kernels::testing
