// Linear: every optimised backend against the reference over a grid of shapes, strides, bias
// and accumulate; a hand-computed case for the reference itself.
#include "kernels/linear.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "base/compute_threads.h"
#include "gtest/gtest.h"
#include "kernels/float16.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

// Weights as stored in `dtype` (2 bytes per value for F16/BF16, packed in uint16 pairs).
std::vector<uint16_t> EncodeHalfWeights(const std::vector<float>& values, DType dtype) {
  std::vector<uint16_t> bits(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    bits[i] = dtype == DType::kF16 ? FloatToHalf(values[i]) : FloatToBFloat16(values[i]);
  }
  return bits;
}

// Weights as int8 with per-row scales (the I8 format): scale = max |w| / 127 per row of
// `cols`, q = round(w / scale). The kernels compute with q * scale, so the reference and the
// tested backend see the same (rounded) matrix.
struct Int8Weights {
  std::vector<int8_t> q;
  std::vector<float> scales;
};

Int8Weights QuantiseRows(const std::vector<float>& values, int cols) {
  Int8Weights out;
  const std::size_t rows = cols > 0 ? values.size() / cols : 0;
  out.q.resize(values.size());
  out.scales.resize(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    float largest = 0.0f;
    for (int c = 0; c < cols; ++c) largest = std::max(largest, std::abs(values[r * cols + c]));
    const float scale = largest / 127.0f;
    out.scales[r] = scale;
    for (int c = 0; c < cols; ++c) {
      const float q = scale > 0 ? std::nearbyint(values[r * cols + c] / scale) : 0.0f;
      out.q[r * cols + c] = static_cast<int8_t>(std::clamp(q, -127.0f, 127.0f));
    }
  }
  return out;
}

struct LinearShape {
  int rows, in_features, out_features;
  bool bias, accumulate;
};

class LinearTest : public ::testing::TestWithParam<BackendCase> {
 protected:
  // Runs y = x W^T + b (+ y) on `backend` and returns y (the whole strided buffer).
  std::vector<float> Run(Backend backend, const LinearShape& s, const std::vector<float>& x,
                         int64_t x_stride, const std::vector<float>& weights, DType dtype,
                         const std::vector<float>& bias, const std::vector<float>& y_init,
                         int64_t y_stride) {
    DeviceArray<float> x_dev(backend, x);
    DeviceArray<float> y_dev(backend, y_init);
    DeviceArray<float> bias_dev(backend, bias);
    const void* weight_ptr;
    DeviceArray<float> weights_f32(backend, dtype == DType::kF32 ? weights : std::vector<float>{});
    const bool half = dtype == DType::kF16 || dtype == DType::kBF16;
    DeviceArray<uint16_t> weights_half(
        backend, half ? EncodeHalfWeights(weights, dtype) : std::vector<uint16_t>{});
    const Int8Weights int8 =
        dtype == DType::kI8 ? QuantiseRows(weights, s.in_features) : Int8Weights{};
    DeviceArray<int8_t> weights_int8(backend, int8.q);
    DeviceArray<float> scales(backend, int8.scales);
    weight_ptr = dtype == DType::kF32 ? static_cast<const void*>(weights_f32.data())
                 : half               ? static_cast<const void*>(weights_half.data())
                                      : static_cast<const void*>(weights_int8.data());
    LinearParams p;
    p.x = x_dev.data();
    p.x_stride = x_stride;
    p.rows = s.rows;
    p.in_features = s.in_features;
    p.weight = weight_ptr;
    p.weight_dtype = dtype;
    p.weight_scale = dtype == DType::kI8 ? scales.data() : nullptr;
    p.out_features = s.out_features;
    p.bias = s.bias ? bias_dev.data() : nullptr;
    p.y = y_dev.data();
    p.y_stride = y_stride;
    p.accumulate = s.accumulate;
    LaunchLinear(backend, p);
    return y_dev.Download();
  }

  // Draws x, W, b and y (four seeds from `seed`) for shape `s` with these row strides, runs
  // `c`'s backend and the reference, and compares the whole strided y buffers: padding
  // columns must be left alone. Without accumulate, y's old contents must not matter, not even
  // NaN (sgemm with beta = 0 must overwrite, never multiply).
  void ExpectMatchesReference(const BackendCase& c, const LinearShape& s, int64_t x_stride,
                              int64_t y_stride, uint32_t& seed) {
    const auto x = RandomFloats(s.rows * x_stride, ++seed);
    const auto weights =
        RandomFloats(static_cast<std::size_t>(s.out_features) * s.in_features, ++seed);
    const auto bias = RandomFloats(s.out_features, ++seed);
    auto y_init = RandomFloats(s.rows * y_stride, ++seed);
    if (!s.accumulate) std::fill(y_init.begin(), y_init.end(), std::nanf(""));
    const auto want =
        Run(Backend::kReference, s, x, x_stride, weights, c.dtype, bias, y_init, y_stride);
    const auto got = Run(c.backend, s, x, x_stride, weights, c.dtype, bias, y_init, y_stride);
    ExpectAllClose(got, want, c.tolerance * (1.0f + s.in_features / 32.0f),
                   (::testing::Message() << "rows=" << s.rows << " in=" << s.in_features
                                         << " out=" << s.out_features << " x_stride=" << x_stride
                                         << " bias=" << s.bias << " accumulate=" << s.accumulate)
                       .GetString());
  }
};

TEST_P(LinearTest, MatchesReferenceOverShapes) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  uint32_t seed = 1;
  // On the cpu backend 1-16 rows (24 on AVX-512) take the fused GEMV (blocks of 8, then one of
  // 4, then the 1-3 left, each over 1, 2 or 4 weight rows side by side and the weight rows left
  // over), more rows its transposed-input tiles; F32 weights past 128 rows take OpenBLAS's sgemm
  // (linear.cc), 128 and 129 on either side of the bound.
  for (int rows : {1, 2, 3, 4, 5, 7, 8, 11, 13, 15, 16, 17, 25, 64, 128, 129}) {
    for (int in_features : {1, 7, 64, 130}) {
      for (int out_features : {1, 5, 33, 96}) {
        for (int flags = 0; flags < 4; ++flags) {
          const LinearShape s{rows, in_features, out_features, (flags & 1) != 0, (flags & 2) != 0};
          ExpectMatchesReference(c, s, in_features + 3, out_features + 2, seed);
          if (HasFailure()) return;
        }
      }
    }
  }
}

// Rows on 16-byte boundaries and in_features a multiple of 8, the shapes of a model's layers:
// the cuda backend's GEMV for 16-bit weights takes these (up to kNarrowGemvMaxRows rows; 1-9
// rows also cover the split-activation GEMM past it, and the GEMV at any bound up to 8); 2056
// inputs are one pass of its block plus a short one; outputs that are not a multiple of its 4 per
// block leave a short last block.
TEST_P(LinearTest, MatchesReferenceWithAlignedRows) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  uint32_t seed = 500;
  for (int rows : {1, 2, 3, 4, 5, 6, 7, 8, 9}) {
    for (int in_features : {8, 64, 2056}) {
      for (int out_features : {1, 6, 33}) {
        const LinearShape s{rows, in_features, out_features, /*bias=*/(rows % 2) == 1,
                            /*accumulate=*/(out_features % 2) == 0};
        ExpectMatchesReference(c, s, in_features + 4, out_features + 1, seed);
        if (HasFailure()) return;
      }
    }
  }
}

// A matrix wider than one tile of the cpu backend's widened 16-bit weights (64 Ki floats: 65
// rows of 1000), so the sgemm path runs several tiles, the last one short.
TEST_P(LinearTest, MatchesReferenceAcrossWeightTiles) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  const LinearShape s{20, 1000, 150, /*bias=*/true, /*accumulate=*/true};
  const auto x = RandomFloats(s.rows * s.in_features, 91);
  const auto weights = RandomFloats(static_cast<std::size_t>(s.out_features) * s.in_features, 92);
  const auto bias = RandomFloats(s.out_features, 93);
  const auto y_init = RandomFloats(s.rows * s.out_features, 94);
  const auto want =
      Run(Backend::kReference, s, x, s.in_features, weights, c.dtype, bias, y_init, s.out_features);
  const auto got =
      Run(c.backend, s, x, s.in_features, weights, c.dtype, bias, y_init, s.out_features);
  ExpectAllClose(got, want, c.tolerance * (1.0f + s.in_features / 32.0f), "tiled");
}

// With two compute threads the cpu backend splits a linear's output features between its
// worker pool's threads (base/worker_pool.h): sgemv rows, sgemm, the fused 16-bit GEMV and the
// widened tiles alike; the result is the one thread's.
TEST_P(LinearTest, MatchesReferenceOnTwoComputeThreads) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  base::SetComputeThreads(2);
  // 20 and 64 rows take the widened tiles on the cpu backend, whose transposed inputs the
  // threads write in ranges of 8 inputs (300 inputs: a range ends mid-way through 8).
  for (const auto& [rows, in] : {std::pair{2, 256}, {5, 256}, {20, 256}, {64, 300}}) {
    const LinearShape s{rows, in, 1000, /*bias=*/true, /*accumulate=*/false};
    const auto x = RandomFloats(s.rows * s.in_features, 95);
    const auto weights = RandomFloats(static_cast<std::size_t>(s.out_features) * s.in_features, 96);
    const auto bias = RandomFloats(s.out_features, 97);
    const std::vector<float> y_init(s.rows * s.out_features, std::nanf(""));
    const auto want = Run(Backend::kReference, s, x, s.in_features, weights, c.dtype, bias, y_init,
                          s.out_features);
    const auto got =
        Run(c.backend, s, x, s.in_features, weights, c.dtype, bias, y_init, s.out_features);
    ExpectAllClose(
        got, want, c.tolerance * (1.0f + s.in_features / 32.0f),
        (::testing::Message() << "two threads, rows=" << rows << " in=" << in).GetString());
  }
  base::SetComputeThreads(1);
}

std::vector<BackendCase> LinearCases() {
  std::vector<BackendCase> cases = F32Cases();
  // The cpu backend keeps F16/BF16 weights 16-bit (kernels/cpu/narrow_weight_linear.h).
  cases.push_back({Backend::kCpu, DType::kF16, DefaultTolerance(Backend::kCpu)});
  cases.push_back({Backend::kCpu, DType::kBF16, DefaultTolerance(Backend::kCpu)});
  // ... and int8 weights int8, scaled per output row (the same narrow_weight_linear paths).
  cases.push_back({Backend::kCpu, DType::kI8, DefaultTolerance(Backend::kCpu)});
  if (CudaCompiledIn()) {  // the cuda backend reads F16/BF16 and I8 weights directly
    cases.push_back({Backend::kCuda, DType::kF16, DefaultTolerance(Backend::kCuda)});
    cases.push_back({Backend::kCuda, DType::kBF16, DefaultTolerance(Backend::kCuda)});
    cases.push_back({Backend::kCuda, DType::kI8, DefaultTolerance(Backend::kCuda)});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Backends, LinearTest, ::testing::ValuesIn(LinearCases()),
                         [](const auto& info) { return CaseName(info.param); });

TEST(LinearReferenceTest, HandComputedSmallCase) {
  // x = [[1, 2], [-1, 0.5]], W = [[1, 0], [0, 1], [2, -1]], b = [0.5, 0, -1]
  const std::vector<float> x = {1, 2, -1, 0.5f};
  const std::vector<float> w = {1, 0, 0, 1, 2, -1};
  const std::vector<float> b = {0.5f, 0, -1};
  std::vector<float> y = {10, 20, 30, 40, 50, 60};
  LinearParams p;
  p.x = x.data();
  p.x_stride = 2;
  p.rows = 2;
  p.in_features = 2;
  p.weight = w.data();
  p.out_features = 3;
  p.bias = b.data();
  p.y = y.data();
  p.y_stride = 3;
  LaunchLinear(Backend::kReference, p);
  EXPECT_EQ(y, (std::vector<float>{1.5f, 2, -1, -0.5f, 0.5f, -3.5f}));
  p.accumulate = true;  // adds the previous y
  LaunchLinear(Backend::kReference, p);
  EXPECT_EQ(y, (std::vector<float>{3, 4, -2, -1, 1, -7}));
}

// y = x * w for one scalar input and one weight stored in `dtype`.
LinearParams ScalarLinear(const float* x, const void* weight, DType dtype, float* y) {
  LinearParams p;
  p.x = x;
  p.x_stride = 1;
  p.rows = 1;
  p.in_features = 1;
  p.weight = weight;
  p.weight_dtype = dtype;
  p.out_features = 1;
  p.y = y;
  p.y_stride = 1;
  return p;
}

TEST(LinearReferenceTest, Int8WeightsAreScaledPerOutputRow) {
  // W = [[3, -2] * 0.5, [127, 1] * 0.25] stored as int8 rows with scales 0.5 and 0.25.
  const std::vector<float> x = {2.0f, 1.0f};
  const std::vector<int8_t> q = {3, -2, 127, 1};
  const std::vector<float> scales = {0.5f, 0.25f};
  std::vector<float> y(2, 0.0f);
  LinearParams p;
  p.x = x.data();
  p.x_stride = 2;
  p.rows = 1;
  p.in_features = 2;
  p.weight = q.data();
  p.weight_dtype = DType::kI8;
  p.weight_scale = scales.data();
  p.out_features = 2;
  p.y = y.data();
  p.y_stride = 2;
  LaunchLinear(Backend::kReference, p);
  EXPECT_EQ(y, (std::vector<float>{(3 * 2 - 2 * 1) * 0.5f, (127 * 2 + 1) * 0.25f}));
}

TEST(LinearReferenceTest, HalfWeightsAreWidenedExactly) {
  // 0.333 is not representable in F16 or BF16: the reference must use the rounded weight.
  const std::vector<float> x = {3.0f};
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    const std::vector<uint16_t> w = EncodeHalfWeights({0.333f}, dtype);
    const float stored = dtype == DType::kF16 ? HalfToFloat(w[0]) : BFloat16ToFloat(w[0]);
    float y = 0;
    LaunchLinear(Backend::kReference, ScalarLinear(&x[0], w.data(), dtype, &y));
    EXPECT_EQ(y, static_cast<float>(3.0 * stored)) << DTypeName(dtype);
  }
}

TEST(LinearCpuTest, HalfWeightsAreWidenedExactly) {
  // The cpu backend keeps 16-bit weights and widens each one exactly in registers: 8 inputs
  // (one AVX2 vector) and a ninth (the scalar tail) against the rounded weights' exact sum.
  const std::vector<float> x(9, 3.0f);
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    const std::vector<uint16_t> w = EncodeHalfWeights(std::vector<float>(9, 0.333f), dtype);
    const float stored = dtype == DType::kF16 ? HalfToFloat(w[0]) : BFloat16ToFloat(w[0]);
    float y = 0;
    LinearParams p = ScalarLinear(x.data(), w.data(), dtype, &y);
    p.in_features = 9;
    LaunchLinear(Backend::kCpu, p);
    EXPECT_NEAR(y, 27.0 * stored, 1e-5) << DTypeName(dtype);
  }
}

}  // namespace
}  // namespace slotserve::kernels::testing
