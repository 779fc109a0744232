// Linear with int8 activations (LinearParams::int8_activations, I8 weights): the reference
// against hand-computed values, the cpu backend's AVX2 and AVX-512 VNNI kernels and its rounded
// rows through the widening GEMV against the reference over shapes, threads and strides, and the
// rounding it adds bounded against the weight-only product.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "base/compute_threads.h"
#include "gtest/gtest.h"
#include "kernels/cpu/int8_activations_linear.h"
#include "kernels/cpu/int8_dot_linear.h"
#include "kernels/cpu/int8_packed_gemm.h"
#include "kernels/cpu/narrow_weight_linear.h"
#include "kernels/int8_activation_blocks.h"
#include "kernels/int8_packed_weights.h"
#include "kernels/linear.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

// int8 rows with per-row scales, as the I8 format stores them (q in [-127, 127]).
struct Int8Matrix {
  std::vector<int8_t> q;
  std::vector<float> scales;
};

Int8Matrix QuantiseWeightRows(const std::vector<float>& values, int cols) {
  Int8Matrix out;
  const std::size_t rows = values.size() / cols;
  out.q.resize(values.size());
  out.scales.resize(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    float largest = 0.0f;
    for (int c = 0; c < cols; ++c) largest = std::max(largest, std::abs(values[r * cols + c]));
    out.scales[r] = largest / 127.0f;
    for (int c = 0; c < cols; ++c) {
      const float q = largest > 0 ? std::nearbyint(values[r * cols + c] / out.scales[r]) : 0.0f;
      out.q[r * cols + c] = static_cast<int8_t>(std::clamp(q, -127.0f, 127.0f));
    }
  }
  return out;
}

struct Shape {
  int rows, in, out;
  bool bias, accumulate;
};

// The backend under test: the reference, or the cpu kernel with one instruction set, or the
// cpu's rounded rows through the widening GEMV (int8_activations_linear.h).
// kCpuBackend: the cpu backend's LaunchLinear with the flag set (it picks the kernel itself).
// kCpuVnniWide: the 512-bit kernels (int8_dot_wide.inc). kCpuPackedGemm: the GEMM over the
// weights' packed copy (int8_packed_gemm.h), packed here by PackInt8Weights.
enum class Path {
  kReference,
  kCpuAvx2,
  kCpuVnni,
  kCpuVnniWide,
  kCpuRoundedRows,
  kCpuPackedGemm,
  kCpuWeightOnly,
  kCpuBackend
};

LinearParams Int8Params(const Shape& s, const std::vector<float>& x, int64_t x_stride,
                        const Int8Matrix& w, const std::vector<float>& bias, std::vector<float>& y,
                        int64_t y_stride) {
  LinearParams p;
  p.x = x.data();
  p.x_stride = x_stride;
  p.rows = s.rows;
  p.in_features = s.in;
  p.weight = w.q.data();
  p.weight_dtype = DType::kI8;
  p.weight_scale = w.scales.data();
  p.out_features = s.out;
  p.bias = s.bias ? bias.data() : nullptr;
  p.y = y.data();
  p.y_stride = y_stride;
  p.accumulate = s.accumulate;
  p.int8_activations = true;
  return p;
}

std::vector<float> RunPath(Path path, const Shape& s, const std::vector<float>& x, int64_t x_stride,
                           const Int8Matrix& w, const std::vector<float>& bias,
                           std::vector<float> y, int64_t y_stride) {
  LinearParams p = Int8Params(s, x, x_stride, w, bias, y, y_stride);
  p.int8_activations = path != Path::kCpuWeightOnly;
  switch (path) {
    case Path::kReference:
      LaunchLinear(Backend::kReference, p);
      break;
    case Path::kCpuAvx2:
    case Path::kCpuVnni:
    case Path::kCpuVnniWide:
    case Path::kCpuRoundedRows: {
      if (path == Path::kCpuRoundedRows) {
        cpu::RoundedRowsLinear(p);
      } else {
        cpu::Int8DotLinear(p, path == Path::kCpuVnni       ? cpu::Int8DotIsa::kAvx512Vnni
                              : path == Path::kCpuVnniWide ? cpu::Int8DotIsa::kAvx512VnniWide
                                                           : cpu::Int8DotIsa::kAvx2);
      }
      break;
    }
    case Path::kCpuPackedGemm: {
      std::vector<uint8_t> packed(Int8PackedWeightBytes(s.out, s.in));
      PackInt8Weights(w.q.data(), s.out, s.in, packed.data());
      p.int8_packed_weight = packed.data();
      cpu::Int8PackedGemm(p);
      break;
    }
    case Path::kCpuWeightOnly:
    case Path::kCpuBackend:
      LaunchLinear(Backend::kCpu, p);
      break;
  }
  return y;
}

TEST(Int8ActivationsReferenceTest, HandComputedBlocks) {
  // 40 inputs: a whole block of 32 and a last block of 8.
  // Block 0: x = 1 at 0, -0.5 at 1, 0.25 at 2, zeros after: amax 1, q = 127, -63.5 -> -64
  // (ties to even), 31.75 -> 32; d0 = 1/127.
  // Block 1: x = 0.2 at 32, -0.1 at 33: amax 0.2, q = 127, -63.5 -> -64; d1 = 0.2/127.
  std::vector<float> x(40, 0.0f);
  x[0] = 1.0f;
  x[1] = -0.5f;
  x[2] = 0.25f;
  x[32] = 0.2f;
  x[33] = -0.1f;
  Int8Matrix w;
  w.q.assign(40, 0);
  w.q[0] = 2;
  w.q[1] = 3;
  w.q[2] = -4;
  w.q[32] = 5;
  w.q[33] = 1;
  w.scales = {0.5f};
  // Block 0: 2*127 + 3*(-64) + (-4)*32 = 254 - 192 - 128 = -66, times 1/127.
  // Block 1: 5*127 + 1*(-64) = 571, times 0.2/127. Then the row scale 0.5.
  const double want = 0.5 * (-66.0 / 127.0 + 571.0 * (0.2f / 127.0f));
  const Shape s{1, 40, 1, false, false};
  const auto y = RunPath(Path::kReference, s, x, 40, w, {}, {0.0f}, 1);
  EXPECT_NEAR(y[0], want, 1e-6);
  // The weight-only product differs: 0.5 * (2 - 1.5 - 1 + 1 - 0.1) = 0.2.
  const auto exact = RunPath(Path::kCpuWeightOnly, s, x, 40, w, {}, {0.0f}, 1);
  EXPECT_NEAR(exact[0], 0.2, 1e-6);
  EXPECT_GT(std::abs(y[0] - exact[0]), 1e-4);
}

TEST(Int8ActivationsReferenceTest, AllZeroBlockContributesNothing) {
  std::vector<float> x(64, 0.0f);
  x[40] = 3.0f;  // block 1 only; block 0 is all zeros (scale 0, no division by zero)
  Int8Matrix w;
  w.q.assign(64, 7);
  w.scales = {2.0f};
  const auto y = RunPath(Path::kReference, {1, 64, 1, false, false}, x, 64, w, {}, {0.0f}, 1);
  EXPECT_FLOAT_EQ(y[0], 2.0f * 7 * 127 * (3.0f / 127.0f));
}

TEST(Int8ActivationsQuantiserTest, BlockBytesAndScale) {
  const float x[5] = {0.5f, -2.0f, 1.0f, 0.0f, -0.0079f};
  int8_t q[5];
  const float d = QuantiseActivationBlock(x, 5, q);
  EXPECT_FLOAT_EQ(d, 2.0f / 127.0f);
  // 0.5 * 63.5 = 31.75 -> 32; -127; 63.5 -> 64 (ties to even); 0; -0.50165 -> -1.
  EXPECT_EQ(std::vector<int>(q, q + 5), (std::vector<int>{32, -127, 64, 0, -1}));
}

class Int8DotCpuTest : public ::testing::TestWithParam<Path> {
 protected:
  void SetUp() override {
    if ((GetParam() == Path::kCpuVnni || GetParam() == Path::kCpuVnniWide ||
         GetParam() == Path::kCpuPackedGemm) &&
        !cpu::CpuHasAvx512Vnni())
      GTEST_SKIP() << "this CPU has no AVX-512 VNNI";
  }
};

// Tolerance relative to the output's magnitude (test_data.h's ExpectAllClose): both compute
// the same integers; only the F32 (cpu) against F64 (reference) sums of the blocks differ.
constexpr float kTolerance = 2e-5f;

TEST_P(Int8DotCpuTest, MatchesReferenceOverShapes) {
  uint32_t seed = 7;
  // 1-3 rows: the kernels' short blocks; 4, 5, 7, 16, 17, 64: blocks of four and the rest.
  // out_features 20, 33 and 96 are two, three and six groups of 16 for the packed GEMM (its
  // tiles take three groups at a time), 1 and 5 part of one.
  // in_features 1, 7, 100 and 130 leave a short last block; 32 and 256 are whole blocks; 32
  // and 100 have an odd number of whole blocks (the wide kernels' 256-bit last block).
  for (int rows : {1, 2, 3, 4, 5, 7, 16, 17, 64}) {
    for (int in : {1, 7, 32, 100, 130, 256}) {
      for (int out : {1, 5, 20, 33, 96}) {
        for (int flags = 0; flags < 4; ++flags) {
          const Shape s{rows, in, out, (flags & 1) != 0, (flags & 2) != 0};
          const int64_t x_stride = in + 3;
          const int64_t y_stride = out + 2;
          // Inputs scaled by 1, 3 or 5 per block and row, so the blocks' scales differ.
          auto x = RandomFloats(rows * x_stride, ++seed);
          for (int r = 0; r < rows; ++r)
            for (int i = 0; i < in; ++i) x[r * x_stride + i] *= 1.0f + 2.0f * ((r + i / 32) % 3);
          const Int8Matrix w =
              QuantiseWeightRows(RandomFloats(static_cast<std::size_t>(out) * in, ++seed), in);
          const auto bias = RandomFloats(out, ++seed);
          auto y_init = RandomFloats(rows * y_stride, ++seed);
          if (!s.accumulate) std::fill(y_init.begin(), y_init.end(), std::nanf(""));
          const auto want = RunPath(Path::kReference, s, x, x_stride, w, bias, y_init, y_stride);
          const auto got = RunPath(GetParam(), s, x, x_stride, w, bias, y_init, y_stride);
          ExpectAllClose(
              got, want, kTolerance * (1.0f + in / 32.0f),
              (::testing::Message() << "rows=" << rows << " in=" << in << " out=" << out
                                    << " bias=" << s.bias << " accumulate=" << s.accumulate)
                  .GetString());
          if (HasFailure()) return;
        }
      }
    }
  }
}

// Dense random inputs, int8 weights and a zero y for shape `s`.
struct Problem {
  std::vector<float> x;
  Int8Matrix w;
  std::vector<float> y_init;
};

Problem RandomProblem(const Shape& s, uint32_t seed) {
  return {RandomFloats(s.rows * s.in, seed),
          QuantiseWeightRows(RandomFloats(static_cast<std::size_t>(s.out) * s.in, seed + 1), s.in),
          std::vector<float>(s.rows * s.out, 0.0f)};
}

// The output features split between two compute threads give the one thread's result, bit
// for bit; the quantised rows are shared by both.
TEST_P(Int8DotCpuTest, TwoComputeThreadsGiveOneThreadsBits) {
  const Shape s{9, 512, 1000, false, false};
  const auto [x, w, y_init] = RandomProblem(s, 31);
  const auto one = RunPath(GetParam(), s, x, s.in, w, {}, y_init, s.out);
  base::SetComputeThreads(2);
  const auto two = RunPath(GetParam(), s, x, s.in, w, {}, y_init, s.out);
  base::SetComputeThreads(1);
  EXPECT_EQ(one, two);
}

// What the activations' rounding may cost: each x moves by at most half its block's step d_b/2,
// so |y - y_weight_only| <= s_w * sum_b d_b / 2 * sum_{i in b} |q_w[i]| (plus F32 rounding). The
// bound is computed here from the inputs, not from either kernel; the difference must also be
// non-zero (the activations really are rounded).
TEST_P(Int8DotCpuTest, RoundingStaysWithinHalfAStepPerBlock) {
  const Shape s{4, 300, 64, false, false};
  const auto [x, w, y_init] = RandomProblem(s, 41);
  const auto rounded = RunPath(GetParam(), s, x, s.in, w, {}, y_init, s.out);
  const auto exact = RunPath(Path::kCpuWeightOnly, s, x, s.in, w, {}, y_init, s.out);
  double largest_difference = 0.0;
  for (int r = 0; r < s.rows; ++r) {
    for (int o = 0; o < s.out; ++o) {
      double bound = 0.0;
      for (int first = 0; first < s.in; first += kInt8ActivationBlock) {
        const int end = std::min(s.in, first + kInt8ActivationBlock);
        double amax = 0.0, weight_mass = 0.0;
        for (int i = first; i < end; ++i) {
          amax = std::max(amax, std::abs(double{x[r * s.in + i]}));
          weight_mass += std::abs(w.q[o * s.in + i]);
        }
        bound += amax / 127.0 / 2.0 * weight_mass;
      }
      bound = bound * w.scales[o] * 1.0001 + 1e-5;
      const double difference = std::abs(double{rounded[r * s.out + o]} - exact[r * s.out + o]);
      EXPECT_LE(difference, bound) << "row " << r << " output " << o;
      largest_difference = std::max(largest_difference, difference);
    }
  }
  EXPECT_GT(largest_difference, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Isas, Int8DotCpuTest,
                         ::testing::Values(Path::kCpuAvx2, Path::kCpuVnni, Path::kCpuVnniWide,
                                           Path::kCpuRoundedRows, Path::kCpuPackedGemm),
                         [](const auto& info) {
                           return std::string(info.param == Path::kCpuVnni       ? "avx512_vnni"
                                              : info.param == Path::kCpuVnniWide ? "avx512_wide"
                                              : info.param == Path::kCpuAvx2     ? "avx2"
                                              : info.param == Path::kCpuPackedGemm
                                                  ? "packed_gemm"
                                                  : "rounded_rows");
                         });

// Through the backend entry point: the cpu linear op picks the int8 kernel when asked, and
// leaves other dtypes alone (the flag applies to I8 weights only).
TEST(Int8ActivationsLinearTest, CpuBackendMatchesReference) {
  const Shape s{3, 96, 40, true, false};
  const auto x = RandomFloats(s.rows * s.in, 51);
  const Int8Matrix w =
      QuantiseWeightRows(RandomFloats(static_cast<std::size_t>(s.out) * s.in, 52), s.in);
  const auto bias = RandomFloats(s.out, 53);
  const std::vector<float> y_init(s.rows * s.out, std::nanf(""));
  const auto want = RunPath(Path::kReference, s, x, s.in, w, bias, y_init, s.out);
  std::vector<float> got = RunPath(Path::kCpuBackend, s, x, s.in, w, bias, y_init, s.out);
  ExpectAllClose(got, want, kTolerance * 4, "cpu backend");
  LinearParams p = Int8Params(s, x, s.in, w, bias, got, s.out);
  // F32 weights with the flag set: the ordinary product, as the reference computes it.
  const std::vector<float> wf = RandomFloats(static_cast<std::size_t>(s.out) * s.in, 54);
  p.weight = wf.data();
  p.weight_dtype = DType::kF32;
  p.weight_scale = nullptr;
  LaunchLinear(Backend::kCpu, p);
  std::vector<float> plain = y_init;
  p.y = plain.data();
  p.int8_activations = false;
  LaunchLinear(Backend::kReference, p);
  ExpectAllClose(got, plain, kTolerance * 4, "F32 weights ignore the flag");
}

// Each batch size the cpu op routes differently (int8_activations_linear.h: one row, 2-7 rows,
// from kInt8WideMinRows rows, past the fused GEMV's bound on either instruction set) matches the
// reference through the backend entry point.
TEST(Int8ActivationsLinearTest, EveryRoutingOfTheCpuOpMatchesReference) {
  for (int rows : {1, 2, cpu::kInt8WideMinRows - 1, cpu::kInt8WideMinRows, cpu::kFusedRows,
                   cpu::kFusedRows + 1, cpu::kFusedRowsAvx512, cpu::kFusedRowsAvx512 + 1, 33}) {
    const Shape s{rows, 256, 72, true, false};
    const auto x = RandomFloats(s.rows * s.in, 61 + rows);
    const Int8Matrix w =
        QuantiseWeightRows(RandomFloats(static_cast<std::size_t>(s.out) * s.in, 62), s.in);
    const auto bias = RandomFloats(s.out, 63);
    const std::vector<float> y_init(s.rows * s.out, std::nanf(""));
    const auto want = RunPath(Path::kReference, s, x, s.in, w, bias, y_init, s.out);
    const auto got = RunPath(Path::kCpuBackend, s, x, s.in, w, bias, y_init, s.out);
    ExpectAllClose(got, want, kTolerance * 9, "rows=" + std::to_string(rows));
  }
}

// Given a packed copy, the cpu op reads it and not the row-major weights: here the copy is
// of other weights (the row-major ones negated), and the result is theirs, at one row and at
// a batch.
TEST(Int8ActivationsLinearTest, CpuBackendReadsThePackedCopyWhenGiven) {
  if (!Int8PackedGemmAvailable(Backend::kCpu)) GTEST_SKIP() << "this CPU has no AVX-512 VNNI";
  for (int rows : {1, 40}) {
    const Shape s{rows, 100, 50, true, false};
    const auto x = RandomFloats(s.rows * s.in, 71 + rows);
    const Int8Matrix w =
        QuantiseWeightRows(RandomFloats(static_cast<std::size_t>(s.out) * s.in, 72), s.in);
    Int8Matrix negated = w;
    for (int8_t& q : negated.q) q = static_cast<int8_t>(-q);
    std::vector<uint8_t> packed(Int8PackedWeightBytes(s.out, s.in));
    PackInt8Weights(negated.q.data(), s.out, s.in, packed.data());
    const auto bias = RandomFloats(s.out, 73);
    const std::vector<float> y_init(s.rows * s.out, std::nanf(""));
    const auto want = RunPath(Path::kReference, s, x, s.in, negated, bias, y_init, s.out);
    std::vector<float> got = y_init;
    LinearParams p = Int8Params(s, x, s.in, w, bias, got, s.out);
    p.int8_packed_weight = packed.data();
    LaunchLinear(Backend::kCpu, p);
    ExpectAllClose(got, want, kTolerance * 5, "rows=" + std::to_string(rows));
  }
}

}  // namespace
}  // namespace slotserve::kernels::testing
