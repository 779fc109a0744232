// The packed copy of int8 weights (kernels/int8_packed_weights.h) made at upload: present only
// for I8 matrices on a backend that runs the packed GEMM with int8 activations on at load, and
// laid out as the header describes (checked byte by byte against the layout's own formula,
// padding included, for a matrix stacked from two parts).
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/int8_packed_weights.h"
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

}  // namespace
}  // namespace slotserve::models
