// Writes a .safetensors file (the format SafetensorsFile reads): an 8-byte little-endian header
// length, the JSON header (names, dtypes, shapes, data_offsets; padded with spaces to a
// multiple of 8 bytes so the data starts aligned), then the tensors' bytes in the order given.
// Used by slotserve-quantize; the Python tools have their own writer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kernels/backend.h"

namespace slotserve::models {

struct TensorToWrite {
  std::string name;
  kernels::DType dtype = kernels::DType::kF32;
  std::vector<int64_t> shape;
  std::string bytes;  // little-endian, shape's element count x the dtype's size
};

absl::Status WriteSafetensors(const std::filesystem::path& path,
                              const std::vector<TensorToWrite>& tensors);

}  // namespace slotserve::models
