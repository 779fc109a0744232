// StepGraphCache: host backends run the recorded work every time; cuda captures it once per
// key and replays it, reading fresh inputs from the same buffers, until invalidated.
#include "kernels/step_graph_cache.h"

#include <vector>

#include "gtest/gtest.h"
#include "kernels/activation.h"
#include "kernels/device_memory.h"
#include "kernels/device_stream.h"
#include "kernels/float16.h"
#include "kernels/linear.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

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

// A replayed graph of cuBLAS work (the F16 linear: split kernel, GEMM, epilogue, scratch)
// gives bit-identical results to running the same launches directly.
TEST_P(StepGraphCacheTest, ReplayedLinearEqualsDirectRun) {
  const Backend backend = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(backend);
  absl::StatusOr<DeviceStream> stream = DeviceStream::Create(backend);
  ASSERT_TRUE(stream.ok()) << stream.status();
  constexpr int kRows = 3, kIn = 40, kOut = 24;
  const DType dtype = backend == Backend::kCpu ? DType::kF32 : DType::kF16;
  std::vector<uint16_t> weight_words;
  std::vector<float> weight_floats = RandomFloats(kIn * kOut, 21);
  DeviceArray<float> weight_f32(backend, weight_floats);
  for (float w : weight_floats) weight_words.push_back(FloatToHalf(w));
  DeviceArray<uint16_t> weight_f16(backend, weight_words);
  DeviceArray<float> bias(backend, RandomFloats(kOut, 22));
  DeviceArray<float> x(backend, kRows * kIn);
  DeviceArray<float> y(backend, kRows * kOut);
  auto linear = [&](Stream s) {
    LinearParams p;
    p.x = x.data();
    p.x_stride = kIn;
    p.rows = kRows;
    p.in_features = kIn;
    p.weight = dtype == DType::kF16 ? static_cast<const void*>(weight_f16.data())
                                    : static_cast<const void*>(weight_f32.data());
    p.weight_dtype = dtype;
    p.out_features = kOut;
    p.bias = bias.data();
    p.y = y.data();
    p.y_stride = kOut;
    LaunchLinear(backend, p, s);
  };
  StepGraphCache cache(backend);
  for (uint32_t seed : {31u, 32u}) {
    x.Upload(RandomFloats(kRows * kIn, seed));
    Synchronize(backend);
    linear(stream->get());
    Synchronize(backend, stream->get());
    const std::vector<float> direct = y.Download();
    y.Upload(std::vector<float>(kRows * kOut, -7.0f));
    Synchronize(backend);
    ASSERT_TRUE(cache.Run(/*key=*/kRows, stream->get(), linear).ok());
    Synchronize(backend, stream->get());
    EXPECT_EQ(y.Download(), direct) << "inputs of seed " << seed;
  }
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

TEST(StepGraphCacheCudaTest, AFailedCaptureRunsTheStepDirectlyInsteadOfAborting) {
  if (!CudaCompiledIn()) GTEST_SKIP() << "no CUDA backend in this build";
  SLOTSERVE_SKIP_IF_UNAVAILABLE(Backend::kCuda);
  absl::StatusOr<DeviceStream> stream = DeviceStream::Create(Backend::kCuda);
  ASSERT_TRUE(stream.ok()) << stream.status();
  DeviceBuffer device = *DeviceBuffer::Allocate(Backend::kCuda, sizeof(float));
  const float one = 1.0f;
  CopyHostToDevice(Backend::kCuda, device.data(), &one, sizeof(float), stream->get());
  float host = 0.0f;
  StepGraphCache cache(Backend::kCuda);
  // A device-to-host copy synchronises the stream: not allowed while capturing. It used to
  // abort the process; now the capture fails, is reported, and the work runs directly.
  const absl::Status status = cache.Run(1, stream->get(), [&](Stream recording) {
    CopyDeviceToHost(Backend::kCuda, &host, device.data(), sizeof(float), recording);
  });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_FALSE(cache.capture_failure().ok());
  EXPECT_FALSE(cache.Contains(1));
  EXPECT_EQ(host, 1.0f) << "the step's work ran once, directly";
  cache.Invalidate();
  EXPECT_TRUE(cache.capture_failure().ok());
}

}  // namespace
}  // namespace slotserve::kernels::testing
