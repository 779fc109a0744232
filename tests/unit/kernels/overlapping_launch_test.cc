// A pre-norm block's ops chained on one stream with no synchronisation between them, each
// reading what the one before wrote, against the reference. On the cuda backend (compute
// capability 9.0+) the norms, the activation and the 16-bit-weight GEMV are launched to overlap
// the kernel before them (kernels/cuda/programmatic_launch.cuh) and must wait for it before
// reading: a kernel that read its input early would compute from stale or half-written rows.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/activation.h"
#include "kernels/float16.h"
#include "kernels/layer_norm.h"
#include "kernels/linear.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

constexpr int kWidth = 256;  // a multiple of 8: the cuda GEMV's 16-byte loads apply
constexpr int kHidden = 1024;
constexpr int kBlocks = 6;

std::vector<uint16_t> HalfBits(const std::vector<float>& values) {
  std::vector<uint16_t> bits(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) bits[i] = FloatToHalf(values[i]);
  return bits;
}

// Weights rounded to F16 and back, so the reference multiplies by the same values.
std::vector<float> RoundedToHalf(std::vector<float> values) {
  for (float& v : values) v = HalfToFloat(FloatToHalf(v));
  return values;
}

struct BlockWeights {
  std::vector<float> gamma, beta, up, up_bias, down, down_bias;
};

BlockWeights RandomBlock(uint32_t seed) {
  BlockWeights w;
  w.gamma = RandomFloats(kWidth, ++seed, 0.5f, 1.5f);
  w.beta = RandomFloats(kWidth, ++seed, -0.1f, 0.1f);
  w.up = RoundedToHalf(
      RandomFloats(static_cast<std::size_t>(kHidden) * kWidth, ++seed, -0.0625f, 0.0625f));
  w.up_bias = RandomFloats(kHidden, ++seed, -0.1f, 0.1f);
  w.down = RoundedToHalf(
      RandomFloats(static_cast<std::size_t>(kWidth) * kHidden, ++seed, -0.03125f, 0.03125f));
  w.down_bias = RandomFloats(kWidth, ++seed, -0.1f, 0.1f);
  return w;
}

// hidden += down(gelu(up(layer_norm(hidden)))) kBlocks times, every op queued on the default
// stream before anything is read back. F32 weights on the reference, F16 elsewhere.
std::vector<float> RunBlocks(Backend backend, const std::vector<BlockWeights>& blocks,
                             const std::vector<float>& input, int rows) {
  const bool half = backend != Backend::kReference;
  DeviceArray<float> hidden(backend, input);
  DeviceArray<float> normed(backend, static_cast<std::size_t>(rows) * kWidth);
  DeviceArray<float> ffn(backend, static_cast<std::size_t>(rows) * kHidden);
  std::vector<std::vector<DeviceArray<float>>> floats;
  std::vector<std::vector<DeviceArray<uint16_t>>> halves;
  for (const BlockWeights& w : blocks) {
    floats.emplace_back();
    floats.back().emplace_back(backend, w.gamma);
    floats.back().emplace_back(backend, w.beta);
    floats.back().emplace_back(backend, w.up_bias);
    floats.back().emplace_back(backend, w.down_bias);
    floats.back().emplace_back(backend, half ? std::vector<float>{} : w.up);
    floats.back().emplace_back(backend, half ? std::vector<float>{} : w.down);
    halves.emplace_back();
    halves.back().emplace_back(backend, half ? HalfBits(w.up) : std::vector<uint16_t>{});
    halves.back().emplace_back(backend, half ? HalfBits(w.down) : std::vector<uint16_t>{});
  }
  Synchronize(backend);
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const auto& f = floats[b];
    const auto& h = halves[b];
    LayerNormParams norm;
    norm.x = hidden.data();
    norm.x_stride = kWidth;
    norm.gamma = f[0].data();
    norm.beta = f[1].data();
    norm.y = normed.data();
    norm.y_stride = kWidth;
    norm.rows = rows;
    norm.dim = kWidth;
    LaunchLayerNorm(backend, norm);
    LinearParams up;
    up.x = normed.data();
    up.x_stride = kWidth;
    up.rows = rows;
    up.in_features = kWidth;
    up.weight = half ? static_cast<const void*>(h[0].data()) : f[4].data();
    up.weight_dtype = half ? DType::kF16 : DType::kF32;
    up.out_features = kHidden;
    up.bias = f[2].data();
    up.y = ffn.data();
    up.y_stride = kHidden;
    LaunchLinear(backend, up);
    ActivationParams activation;
    activation.x = ffn.data();
    activation.stride = kHidden;
    activation.rows = rows;
    activation.cols = kHidden;
    LaunchActivation(backend, activation);
    LinearParams down = up;
    down.x = ffn.data();
    down.x_stride = kHidden;
    down.in_features = kHidden;
    down.weight = half ? static_cast<const void*>(h[1].data()) : f[5].data();
    down.out_features = kWidth;
    down.bias = f[3].data();
    down.y = hidden.data();
    down.y_stride = kWidth;
    down.accumulate = true;
    LaunchLinear(backend, down);
  }
  return hidden.Download();
}

class OverlappingLaunchTest : public ::testing::TestWithParam<BackendCase> {};

TEST_P(OverlappingLaunchTest, ChainedBlockOpsMatchTheReference) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  std::vector<BlockWeights> blocks;
  for (int b = 0; b < kBlocks; ++b) blocks.push_back(RandomBlock(100 * (b + 1)));
  // 1 and 2 rows take the cuda GEMV; 3 its GEMM.
  for (int rows : {1, 2, 3}) {
    const std::vector<float> input = RandomFloats(static_cast<std::size_t>(rows) * kWidth, 7);
    const std::vector<float> want = RunBlocks(Backend::kReference, blocks, input, rows);
    const std::vector<float> got = RunBlocks(c.backend, blocks, input, rows);
    ExpectAllClose(got, want, c.tolerance, "rows=" + std::to_string(rows));
  }
}

std::vector<BackendCase> OverlappingLaunchCases() {
  std::vector<BackendCase> cases;
  for (Backend b : OptimisedBackends()) cases.push_back({b, DType::kF16, DefaultTolerance(b)});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Backends, OverlappingLaunchTest,
                         ::testing::ValuesIn(OverlappingLaunchCases()),
                         [](const auto& info) { return CaseName(info.param); });

}  // namespace
}  // namespace slotserve::kernels::testing
