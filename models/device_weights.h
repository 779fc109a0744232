// Weights copied from the memory-mapped file to a backend's device, in the form the kernels
// read: matrices keep the file's dtype (F32, F16, BF16 or I8 with its row scales: every
// backend's linear and embedding ops read narrow weights directly, widening them as they
// compute in F32); vectors (biases, norm parameters, precomputed constants) are always F32.
#pragma once

#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "kernels/device_memory.h"
#include "models/safetensors_file.h"

namespace slotserve::models {

struct DeviceMatrix {
  kernels::DeviceBuffer buffer;
  kernels::DType dtype = kernels::DType::kF32;
  kernels::DeviceBuffer scale;  // I8: the rows' scales, F32 [rows]; empty otherwise
  // I8 with int8 activations on at load, where the backend runs the packed GEMM: the weights
  // packed for it (kernels/int8_packed_weights.h); empty otherwise.
  kernels::DeviceBuffer int8_packed;
  int rows = 0;
  int cols = 0;
};

// Stacks row blocks [rows_i, cols] (all with the same number of columns) into one matrix on
// the device, e.g. q/k/v projections fused into one GEMM weight. Parts of different dtypes are
// all widened to F32.
absl::StatusOr<DeviceMatrix> UploadStackedMatrix(kernels::Backend backend,
                                                 std::span<const SafetensorsTensor* const> parts);

// The values of `parts` (any shape) concatenated, as F32 on the device.
absl::StatusOr<kernels::DeviceBuffer> UploadConcatenatedFloats(
    kernels::Backend backend, std::span<const SafetensorsTensor* const> parts);

absl::StatusOr<kernels::DeviceBuffer> UploadFloats(kernels::Backend backend,
                                                   std::span<const float> values);

}  // namespace slotserve::models
