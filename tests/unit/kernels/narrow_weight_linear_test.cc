// The cpu backend's narrow-weight linear (kernels/cpu/narrow_weight_linear.h), for F16, BF16,
// I8 and the F32 weights that linear.cc sends to its fused GEMV, on each of its instruction sets,
// AVX2 and AVX-512, whichever CPU runs the test: linear_test.cc reaches only the one the CPU's
// best. Against a double-precision sum over the stored (widened) weights, over batches that take
// every block shape of the fused GEMV (8, 4, 1-3 rows; 1, 2 or 4 weight rows side by side and the
// ones left over) and the widened tiles beyond it.
#include "kernels/cpu/narrow_weight_linear.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "base/compute_threads.h"
#include "gtest/gtest.h"
#include "kernels/float16.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

using cpu::NarrowGemvIsa;

// Weights stored in `dtype`, and the floats they stand for (scale included for I8).
struct StoredWeights {
  std::vector<uint16_t> half;
  std::vector<int8_t> int8;
  std::vector<float> scales;
  std::vector<float> widened;  // for F32 also the stored weights
  DType dtype = DType::kF16;
  const void* data() const {
    if (dtype == DType::kF32) return widened.data();
    return int8.empty() ? static_cast<const void*>(half.data()) : int8.data();
  }
};

StoredWeights Store(const std::vector<float>& values, int out, int in, DType dtype) {
  StoredWeights w;
  w.dtype = dtype;
  w.widened.resize(values.size());
  if (dtype == DType::kF32) {
    w.widened = values;
  } else if (dtype == DType::kI8) {
    w.int8.resize(values.size());
    w.scales.resize(out);
    for (int o = 0; o < out; ++o) {
      float largest = 0.0f;
      for (int i = 0; i < in; ++i) largest = std::max(largest, std::abs(values[o * in + i]));
      w.scales[o] = largest > 0 ? largest / 127.0f : 1.0f;
      for (int i = 0; i < in; ++i) {
        const float q = std::clamp(std::nearbyint(values[o * in + i] / w.scales[o]), -127.f, 127.f);
        w.int8[o * in + i] = static_cast<int8_t>(q);
        w.widened[o * in + i] = q * w.scales[o];
      }
    }
  } else {
    w.half.resize(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      w.half[i] = dtype == DType::kF16 ? FloatToHalf(values[i]) : FloatToBFloat16(values[i]);
      w.widened[i] = dtype == DType::kF16 ? HalfToFloat(w.half[i]) : BFloat16ToFloat(w.half[i]);
    }
  }
  return w;
}

struct Problem {
  int rows, in, out;
  int64_t x_stride, y_stride;
  bool accumulate;
  std::vector<float> x, y_init;
  StoredWeights weights;
};

Problem MakeProblem(int rows, int in, int out, bool accumulate, DType dtype, uint32_t seed) {
  Problem pr{rows, in, out, in + 3, out + 2, accumulate, {}, {}, {}};
  pr.x = RandomFloats(rows * pr.x_stride, seed);
  pr.y_init = RandomFloats(rows * pr.y_stride, seed + 1);
  pr.weights = Store(RandomFloats(static_cast<std::size_t>(out) * in, seed + 2), out, in, dtype);
  return pr;
}

std::vector<float> RunKernel(const Problem& pr, DType dtype, NarrowGemvIsa isa) {
  std::vector<float> y = pr.y_init;
  LinearParams p;
  p.x = pr.x.data();
  p.x_stride = pr.x_stride;
  p.rows = pr.rows;
  p.in_features = pr.in;
  p.weight = pr.weights.data();
  p.weight_dtype = dtype;
  p.weight_scale = dtype == DType::kI8 ? pr.weights.scales.data() : nullptr;
  p.out_features = pr.out;
  p.y = y.data();
  p.y_stride = pr.y_stride;
  p.accumulate = pr.accumulate;
  cpu::NarrowWeightLinear(p, isa);
  return y;
}

// The same product summed in double over the widened weights; the padding columns of y keep
// their initial values.
std::vector<float> Expected(const Problem& pr) {
  std::vector<float> y = pr.y_init;
  for (int r = 0; r < pr.rows; ++r) {
    for (int o = 0; o < pr.out; ++o) {
      double sum = 0;
      for (int i = 0; i < pr.in; ++i) {
        sum += static_cast<double>(pr.weights.widened[o * pr.in + i]) * pr.x[r * pr.x_stride + i];
      }
      float& out = y[r * pr.y_stride + o];
      out = pr.accumulate ? static_cast<float>(out + sum) : static_cast<float>(sum);
    }
  }
  return y;
}

class NarrowWeightLinearTest : public ::testing::TestWithParam<std::tuple<NarrowGemvIsa, DType>> {
 protected:
  void SetUp() override {
    if (isa() == NarrowGemvIsa::kAvx512 && !cpu::CpuHasAvx512())
      GTEST_SKIP() << "this CPU has no AVX-512 F/VL/BW";
  }
  NarrowGemvIsa isa() const { return std::get<0>(GetParam()); }
  DType dtype() const { return std::get<1>(GetParam()); }
};

TEST_P(NarrowWeightLinearTest, MatchesDoubleSumOverShapes) {
  uint32_t seed = 7;
  // Rows 1-16 (1-24 on AVX-512) take the fused GEMV: 8-row blocks, one 4-row block, then 1-3;
  // 17-64 (25 and up on AVX-512) the widened tiles. Inputs of 1-17 floats leave a scalar tail after
  // the vector loop (8 or 16 lanes); 5 and 33 outputs leave weight rows over after 2 or 4 side by
  // side. On AVX-512 the tiles' product (transposed_input_gemm.h) takes 64 rows at a time (65 and
  // 100: a second, partial block), 6 outputs per tile (5 and 33 leave 5 and 3 over) and 128
  // inputs per pass (130 and 300: two and three passes), and writes 16 outputs at a time back
  // (33 and 40: whole blocks and a tail). On AVX2 it takes 64 rows per block in tiles of 24 or 16
  // rows (17, 24, 31-41: one to three vectors of 8; 100: 64 + 36), 4 or 6 outputs per tile, 64
  // inputs per pass, and writes 8 outputs at a time back.
  for (int rows :
       {1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 15, 16, 17, 24, 31, 32, 33, 40, 41, 64, 65, 100}) {
    for (int in : {1, 7, 15, 17, 64, 130, 300}) {
      for (int out : {1, 3, 5, 33, 40}) {
        const Problem pr = MakeProblem(rows, in, out, (rows + out) % 2 == 0, dtype(), ++seed);
        ExpectAllClose(RunKernel(pr, dtype(), isa()), Expected(pr), 2e-6f * (1.0f + in / 8.0f),
                       "rows=" + std::to_string(rows) + " in=" + std::to_string(in) +
                           " out=" + std::to_string(out));
        if (HasFailure()) return;
      }
    }
  }
}

// The outputs are split between the threads; each output is summed the same way in either split.
TEST_P(NarrowWeightLinearTest, TwoComputeThreadsGiveOneThreadsBits) {
  for (int rows : {1, 3, 8, 13, 24}) {
    const Problem pr = MakeProblem(rows, 256, 1000, false, dtype(), 300 + rows);
    base::SetComputeThreads(1);
    const std::vector<float> one = RunKernel(pr, dtype(), isa());
    base::SetComputeThreads(2);
    const std::vector<float> two = RunKernel(pr, dtype(), isa());
    base::SetComputeThreads(1);
    EXPECT_EQ(one, two) << "rows=" << rows;
  }
}

// Within the fused GEMV's batches a row's outputs do not depend on the rows around it: an
// 8-row block folds its accumulators by a transposing tree, a single row one accumulator at a
// time, with the same additions in the same order.
TEST_P(NarrowWeightLinearTest, ARowInABatchGivesTheBitsOfTheRowAlone) {
  std::vector<int> batches = {8, 13, cpu::kFusedRows};
  if (isa() == NarrowGemvIsa::kAvx512) batches.push_back(cpu::kFusedRowsAvx512);
  for (int rows : batches) {
    const Problem batch = MakeProblem(rows, 256, 40, false, dtype(), 500 + rows);
    const std::vector<float> together = RunKernel(batch, dtype(), isa());
    for (int r = 0; r < rows; ++r) {
      Problem alone = batch;
      alone.rows = 1;
      alone.x.assign(batch.x.begin() + r * batch.x_stride,
                     batch.x.begin() + (r + 1) * batch.x_stride);
      alone.y_init.assign(batch.y_init.begin() + r * batch.y_stride,
                          batch.y_init.begin() + (r + 1) * batch.y_stride);
      const std::vector<float> one = RunKernel(alone, dtype(), isa());
      const std::vector<float> row(together.begin() + r * batch.y_stride,
                                   together.begin() + (r + 1) * batch.y_stride);
      ASSERT_EQ(row, one) << "rows=" << rows << " row " << r;
    }
  }
}

std::string CaseName(const ::testing::TestParamInfo<std::tuple<NarrowGemvIsa, DType>>& info) {
  const char* isa = std::get<0>(info.param) == NarrowGemvIsa::kAvx2 ? "avx2" : "avx512";
  const DType dtype = std::get<1>(info.param);
  const char* name = dtype == DType::kF16    ? "f16"
                     : dtype == DType::kBF16 ? "bf16"
                     : dtype == DType::kI8   ? "i8"
                                             : "f32";
  return std::string(isa) + "_" + name;
}

INSTANTIATE_TEST_SUITE_P(
    IsasAndDtypes, NarrowWeightLinearTest,
    ::testing::Combine(::testing::Values(NarrowGemvIsa::kAvx2, NarrowGemvIsa::kAvx512),
                       ::testing::Values(DType::kF16, DType::kBF16, DType::kI8, DType::kF32)),
    CaseName);

}  // namespace
}  // namespace slotserve::kernels::testing
