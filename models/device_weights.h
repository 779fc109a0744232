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
  // I8 read by the linear op with int8 activations on at load, where the backend runs the
  // packed GEMM: the weights packed for it (kernels/int8_packed_weights.h), and `buffer` empty;
  // empty otherwise.
  kernels::DeviceBuffer int8_packed;
  int rows = 0;
  int cols = 0;
};

// Which ops read a matrix on the device, which decides the copies the loader keeps: a layer's
// weights and an untied head are read by the linear op only, a token table by the embedding
// lookup, a table tied to the head by both. The packed copy is made for the linear op's readers
// and replaces the row-major one (`buffer` stays empty; the embedding lookup reads a tied
// table's rows from the packed copy), so int8 weights take their own size in memory once, not
// twice. An untied table is not packed.
enum class MatrixReaders { kLinear, kEmbedding, kEmbeddingAndLinear };

// A token table's readers: the embedding lookup, and the linear op too when the head is tied to
// it.
inline MatrixReaders TokenTableReaders(bool tied_to_head) {
  return tied_to_head ? MatrixReaders::kEmbeddingAndLinear : MatrixReaders::kEmbedding;
}

// Stacks row blocks [rows_i, cols] (all with the same number of columns) into one matrix on
// the device, e.g. q/k/v projections fused into one GEMM weight. Parts of different dtypes are
// all widened to F32.
absl::StatusOr<DeviceMatrix> UploadStackedMatrix(kernels::Backend backend,
                                                 std::span<const SafetensorsTensor* const> parts,
                                                 MatrixReaders readers = MatrixReaders::kLinear);

// The values of `parts` (any shape) concatenated, as F32 on the device.
absl::StatusOr<kernels::DeviceBuffer> UploadConcatenatedFloats(
    kernels::Backend backend, std::span<const SafetensorsTensor* const> parts);

absl::StatusOr<kernels::DeviceBuffer> UploadFloats(kernels::Backend backend,
                                                   std::span<const float> values);

}  // namespace slotserve::models
