#include "models/device_weights.h"

#include <cstring>

#include "base/status_macros.h"
#include "kernels/int8_packed_weights.h"
#include "models/int8_activations.h"

namespace slotserve::models {

absl::StatusOr<DeviceMatrix> UploadStackedMatrix(kernels::Backend backend,
                                                 std::span<const SafetensorsTensor* const> parts,
                                                 MatrixReaders readers) {
  DeviceMatrix matrix;
  matrix.cols = static_cast<int>(parts.front()->shape.back());
  bool same_dtype = true;
  for (const SafetensorsTensor* part : parts) {
    matrix.rows += static_cast<int>(part->shape.front());
    same_dtype = same_dtype && part->dtype == parts.front()->dtype;
  }
  // Every backend's linear and embedding ops read F16/BF16/I8 directly (widening in
  // registers), so narrow matrices stay narrow: a half or a quarter of the memory and of the
  // bytes a decode step streams. Parts of different dtypes are widened to one F32 matrix (I8
  // times its scales).
  const bool keep_file_dtype = same_dtype;
  matrix.dtype = keep_file_dtype ? parts.front()->dtype : kernels::DType::kF32;

  if (matrix.dtype == kernels::DType::kI8) {  // the parts' row scales, stacked as the rows
    std::vector<float> scales;
    for (const SafetensorsTensor* part : parts) {
      const std::vector<float> part_scales = part->row_scale->ToFloat32();
      scales.insert(scales.end(), part_scales.begin(), part_scales.end());
    }
    SLOTSERVE_ASSIGN_OR_RETURN(matrix.scale, UploadFloats(backend, scales));
  }
  const size_t element_bytes = kernels::DTypeSize(matrix.dtype);
  std::vector<uint8_t> host(static_cast<size_t>(matrix.rows) * matrix.cols * element_bytes);
  size_t offset = 0;
  for (const SafetensorsTensor* part : parts) {
    if (keep_file_dtype) {
      std::memcpy(host.data() + offset, part->data, static_cast<size_t>(part->bytes));
      offset += static_cast<size_t>(part->bytes);
    } else {
      const std::vector<float> values = part->ToFloat32();
      std::memcpy(host.data() + offset, values.data(), values.size() * sizeof(float));
      offset += values.size() * sizeof(float);
    }
  }
  const bool packed = matrix.dtype == kernels::DType::kI8 && readers != MatrixReaders::kEmbedding &&
                      Int8Activations() && kernels::Int8PackedGemmAvailable(backend);
  if (packed) {
    // The packed GEMM runs on the host: the packed copy is written in place.
    SLOTSERVE_ASSIGN_OR_RETURN(
        matrix.int8_packed, kernels::DeviceBuffer::Allocate(
                                backend, kernels::Int8PackedWeightBytes(matrix.rows, matrix.cols)));
    kernels::PackInt8Weights(reinterpret_cast<const int8_t*>(host.data()), matrix.rows, matrix.cols,
                             matrix.int8_packed.as<uint8_t>());
  }
  if (!packed) {
    SLOTSERVE_ASSIGN_OR_RETURN(matrix.buffer,
                               kernels::DeviceBuffer::Allocate(backend, host.size()));
    kernels::CopyHostToDevice(backend, matrix.buffer.data(), host.data(), host.size());
  }
  return matrix;
}

absl::StatusOr<kernels::DeviceBuffer> UploadConcatenatedFloats(
    kernels::Backend backend, std::span<const SafetensorsTensor* const> parts) {
  std::vector<float> values;
  for (const SafetensorsTensor* part : parts) {
    const std::vector<float> part_values = part->ToFloat32();
    values.insert(values.end(), part_values.begin(), part_values.end());
  }
  return UploadFloats(backend, values);
}

absl::StatusOr<kernels::DeviceBuffer> UploadFloats(kernels::Backend backend,
                                                   std::span<const float> values) {
  SLOTSERVE_ASSIGN_OR_RETURN(kernels::DeviceBuffer buffer,
                             kernels::DeviceBuffer::Allocate(backend, values.size_bytes()));
  kernels::CopyHostToDevice(backend, buffer.data(), values.data(), values.size_bytes());
  return buffer;
}

}  // namespace slotserve::models
