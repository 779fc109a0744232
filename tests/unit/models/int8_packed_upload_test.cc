// The packed copy of int8 weights (kernels/int8_packed_weights.h) made at upload: present only
// for I8 matrices on a backend that runs the packed GEMM with int8 activations on at load, and
// laid out as the header describes (checked byte by byte against the layout's own formula,
// padding included, for a matrix stacked from two parts). A packed matrix keeps no row-major
// copy, multiplies as the row-major one does with int8 activations, and its rows unpack to the
// weights (the embedding lookup of a tied table).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/int8_packed_weights.h"
#include "models/block_ops.h"
#include "models/device_weights.h"
#include "models/int8_activations.h"
#include "models/safetensors_file.h"

namespace slotserve::models {
namespace {

// An I8 part [rows, cols] with its row scales, over storage the test keeps alive.
struct Int8Part {
  std::vector<int8_t> q;
  std::vector<float> scales;
  SafetensorsTensor scale_tensor;
  SafetensorsTensor tensor;

  Int8Part(int rows, int cols, int seed) : q(static_cast<size_t>(rows) * cols), scales(rows) {
    for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<int8_t>((i * 37 + seed) % 255 - 127);
    for (int r = 0; r < rows; ++r) scales[r] = 0.01f * (r + 1);
    scale_tensor.dtype = kernels::DType::kF32;
    scale_tensor.shape = {rows};
    scale_tensor.data = reinterpret_cast<const uint8_t*>(scales.data());
    scale_tensor.bytes = rows * sizeof(float);
    scale_tensor.is_row_scale = true;
    tensor.dtype = kernels::DType::kI8;
    tensor.shape = {rows, cols};
    tensor.data = reinterpret_cast<const uint8_t*>(q.data());
    tensor.bytes = static_cast<int64_t>(q.size());
    tensor.row_scale = &scale_tensor;
  }
};

class Int8PackedUploadTest : public ::testing::Test {
 protected:
  void TearDown() override { SetInt8Activations(false); }
};

TEST_F(Int8PackedUploadTest, PackedCopyFollowsTheLayout) {
  if (!kernels::Int8PackedGemmAvailable(kernels::Backend::kCpu))
    GTEST_SKIP() << "this CPU has no AVX-512 VNNI";
  constexpr int kCols = 70;  // three blocks of 32, the last one padded
  const Int8Part first(20, kCols, 1), second(13, kCols, 2);
  const SafetensorsTensor* parts[] = {&first.tensor, &second.tensor};
  SetInt8Activations(true);
  auto matrix = UploadStackedMatrix(kernels::Backend::kCpu, parts);
  ASSERT_TRUE(matrix.ok()) << matrix.status();
  ASSERT_EQ(matrix->rows, 33);
  // 33 rows -> three groups of 16; 70 columns -> 96.
  constexpr int kPaddedCols = 96;
  ASSERT_EQ(matrix->int8_packed.bytes(), size_t{3} * 16 * kPaddedCols);
  const uint8_t* packed = matrix->int8_packed.as<uint8_t>();
  for (int r = 0; r < 48; ++r) {
    for (int c = 0; c < kPaddedCols; ++c) {
      int want = 0;  // padding: a zero weight
      if (r < 20 && c < kCols) want = first.q[r * kCols + c];
      if (r >= 20 && r < 33 && c < kCols) want = second.q[(r - 20) * kCols + c];
      const size_t at = size_t(r / 16) * 16 * kPaddedCols + (c / 4) * 64 + (r % 16) * 4 + c % 4;
      ASSERT_EQ(packed[at], want + 128) << "row " << r << " column " << c;
    }
  }
}

TEST_F(Int8PackedUploadTest, NoPackedCopyWithoutInt8ActivationsOrOnTheReference) {
  const Int8Part part(20, 64, 3);
  const SafetensorsTensor* parts[] = {&part.tensor};
  auto off = UploadStackedMatrix(kernels::Backend::kCpu, parts);
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(off->int8_packed.bytes(), 0u);
  SetInt8Activations(true);
  auto reference = UploadStackedMatrix(kernels::Backend::kReference, parts);
  ASSERT_TRUE(reference.ok()) << reference.status();
  EXPECT_EQ(reference->int8_packed.bytes(), 0u);
  EXPECT_FALSE(kernels::Int8PackedGemmAvailable(kernels::Backend::kReference));
}

TEST_F(Int8PackedUploadTest, APackedMatrixKeepsNoRowMajorCopy) {
  if (!kernels::Int8PackedGemmAvailable(kernels::Backend::kCpu))
    GTEST_SKIP() << "this CPU has no AVX-512 VNNI";
  const Int8Part part(20, 64, 4);
  const SafetensorsTensor* parts[] = {&part.tensor};
  SetInt8Activations(true);
  struct Want {
    MatrixReaders readers;
    bool row_major;
    bool packed;
  };
  for (const Want want : {Want{MatrixReaders::kLinear, false, true},
                          Want{MatrixReaders::kEmbeddingAndLinear, false, true},
                          Want{MatrixReaders::kEmbedding, true, false}}) {
    auto matrix = UploadStackedMatrix(kernels::Backend::kCpu, parts, want.readers);
    ASSERT_TRUE(matrix.ok()) << matrix.status();
    const int readers = static_cast<int>(want.readers);
    EXPECT_EQ(matrix->buffer.bytes(), want.row_major ? part.q.size() : 0u) << "readers " << readers;
    EXPECT_EQ(matrix->int8_packed.bytes() > 0, want.packed) << "readers " << readers;
    EXPECT_EQ(matrix->rows, 20);
    EXPECT_EQ(matrix->cols, 64);
    EXPECT_EQ(matrix->scale.bytes(), 20 * sizeof(float));
  }
}

TEST_F(Int8PackedUploadTest, ThePackedCopyAloneMultipliesAsTheDefinitionDoes) {
  if (!kernels::Int8PackedGemmAvailable(kernels::Backend::kCpu))
    GTEST_SKIP() << "this CPU has no AVX-512 VNNI";
  constexpr int kRows = 5, kOut = 33, kIn = 70;
  const Int8Part part(kOut, kIn, 5);
  const SafetensorsTensor* parts[] = {&part.tensor};
  std::vector<float> x(size_t{kRows} * kIn);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 2.0f;
  const auto multiply = [&](kernels::Backend backend, const DeviceMatrix& weight) {
    std::vector<float> y(size_t{kRows} * kOut, -1.0f);
    RunLinear(backend, nullptr, weight, /*bias=*/nullptr, x.data(), kIn, kRows, y.data(), kOut,
              /*accumulate=*/false);
    return y;
  };
  auto row_major = UploadStackedMatrix(kernels::Backend::kCpu, parts);  // int8 activations off
  ASSERT_TRUE(row_major.ok()) << row_major.status();
  SetInt8Activations(true);
  auto packed = UploadStackedMatrix(kernels::Backend::kCpu, parts);
  auto reference = UploadStackedMatrix(kernels::Backend::kReference, parts);
  ASSERT_TRUE(packed.ok()) << packed.status();
  ASSERT_TRUE(reference.ok()) << reference.status();
  ASSERT_EQ(packed->buffer.bytes(), 0u);
  // The reference op is the scalar definition of int8 activations
  // (kernels/int8_activation_blocks.h).
  const std::vector<float> want = multiply(kernels::Backend::kReference, *reference);
  const std::vector<float> got = multiply(kernels::Backend::kCpu, *packed);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-4f * (1.0f + std::abs(want[i]))) << "output " << i;
  }
  // ... which is the exact product up to the inputs' rounding (to 8 bits per block of 32, scaled
  // by its largest magnitude: at most half a step, max / 254, per input), and far from the -1
  // the outputs started at.
  SetInt8Activations(false);
  const std::vector<float> exact = multiply(kernels::Backend::kCpu, *row_major);
  for (int r = 0; r < kRows; ++r) {
    for (int o = 0; o < kOut; ++o) {
      double bound = 1e-4;
      for (int k = 0; k < kIn; ++k) {
        float block_max = 0.0f;
        for (int b = k / 32 * 32; b < std::min(kIn, k / 32 * 32 + 32); ++b)
          block_max = std::max(block_max, std::abs(x[r * kIn + b]));
        bound += std::abs(part.q[o * kIn + k] * part.scales[o]) * block_max / 254.0;
      }
      const size_t at = size_t{r} * kOut + o;
      ASSERT_NEAR(got[at], exact[at], bound) << "row " << r << " output " << o;
    }
  }
  // With the setting switched off after load, the packed matrix still multiplies: it has no
  // other form.
  EXPECT_EQ(multiply(kernels::Backend::kCpu, *packed), got);
}

TEST_F(Int8PackedUploadTest, PackedRowsUnpackToTheWeights) {
  constexpr int kRows = 33, kCols = 70;  // a padded group and a padded block
  const Int8Part part(kRows, kCols, 6);
  std::vector<uint8_t> packed(kernels::Int8PackedWeightBytes(kRows, kCols));
  kernels::PackInt8Weights(part.q.data(), kRows, kCols, packed.data());
  std::vector<float> row(kCols);
  for (int r = 0; r < kRows; ++r) {
    kernels::UnpackInt8Row(packed.data(), kCols, r, 0.5f, row.data());
    for (int c = 0; c < kCols; ++c) {
      ASSERT_EQ(row[c], 0.5f * part.q[r * kCols + c]) << "row " << r << " column " << c;
    }
  }
}

}  // namespace
}  // namespace slotserve::models
