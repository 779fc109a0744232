// A memory-mapped .safetensors file: 8-byte little-endian header length, a JSON header naming
// each tensor's dtype, shape and byte range, then the raw little-endian data. Opening checks
// the whole header against the file (sizes, ranges, overlaps, dtypes) so that nothing read
// later can fall outside the mapping.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"

namespace slotserve::models {

struct SafetensorsTensor {
  std::string name;
  kernels::DType dtype = kernels::DType::kF32;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;  // inside the mapping; not necessarily aligned
  int64_t bytes = 0;
  // I8 (int8 weights, docs/MODEL_FORMAT.md): the matrix's per-row scales, the F32 tensor
  // "<name>_scale" [rows]; element [r, c] is q[r, c] * scale[r]. Linked and checked by Open.
  const SafetensorsTensor* row_scale = nullptr;
  // True for such a scale tensor: it belongs to its matrix, not to the model's tensor list.
  bool is_row_scale = false;

  int64_t num_elements() const;
  // The values as float32 (F16 / BF16 widened exactly, I8 times its row's scale).
  std::vector<float> ToFloat32() const;
  // Element i as float32, read without assuming alignment.
  float ElementAsFloat32(int64_t index) const;
};

class SafetensorsFile {
 public:
  // Headers longer than this are refused before anything is parsed.
  static constexpr uint64_t kMaxHeaderBytes = 100u << 20;

  // Messages name the file by `path`.
  static absl::StatusOr<std::unique_ptr<SafetensorsFile>> Open(const std::filesystem::path& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& source() const { return source_; }
  const std::map<std::string, SafetensorsTensor, std::less<>>& tensors() const { return tensors_; }
  // Null when absent.
  const SafetensorsTensor* Find(std::string_view name) const;

 private:
  SafetensorsFile() = default;
  absl::Status ParseHeader();
  // Gives every I8 tensor its "<name>_scale" (refusing an I8 tensor that is not a matrix or
  // lacks a well-formed scale).
  absl::Status LinkRowScales();

  std::string source_;
  const uint8_t* mapping_ = nullptr;
  uint64_t size_ = 0;
  std::map<std::string, SafetensorsTensor, std::less<>> tensors_;
};

// "[32, 16]"
std::string ShapeString(const std::vector<int64_t>& shape);

}  // namespace slotserve::models
