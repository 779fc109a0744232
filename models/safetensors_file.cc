#include "models/safetensors_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/json_document.h"
#include "base/status_macros.h"
#include "kernels/float16.h"

namespace slotserve::models {
namespace {

constexpr uint64_t kLengthPrefixBytes = 8;

absl::StatusOr<kernels::DType> ParseDType(std::string_view name) {
  if (name == "F32") return kernels::DType::kF32;
  if (name == "F16") return kernels::DType::kF16;
  if (name == "BF16") return kernels::DType::kBF16;
  if (name == "I8") return kernels::DType::kI8;
  return absl::InvalidArgumentError("");
}

// Reads a non-negative JSON integer; false when the value is anything else.
bool ReadUnsigned(const nlohmann::json& value, uint64_t& out) {
  if (value.is_number_unsigned()) {
    out = value.get<uint64_t>();
    return true;
  }
  if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    out = static_cast<uint64_t>(value.get<int64_t>());
    return true;
  }
  return false;
}

// Closes a file descriptor on every return path.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

int64_t SafetensorsTensor::num_elements() const {
  return bytes / static_cast<int64_t>(kernels::DTypeSize(dtype));
}

float SafetensorsTensor::ElementAsFloat32(int64_t index) const {
  switch (dtype) {
    case kernels::DType::kF32: {
      float value;
      std::memcpy(&value, data + index * 4, sizeof(value));
      return value;
    }
    case kernels::DType::kF16:
    case kernels::DType::kBF16: {
      uint16_t bits;
      std::memcpy(&bits, data + index * 2, sizeof(bits));
      return dtype == kernels::DType::kF16 ? kernels::HalfToFloat(bits)
                                           : kernels::BFloat16ToFloat(bits);
    }
    case kernels::DType::kI8: {
      const float value = static_cast<float>(static_cast<int8_t>(data[index]));
      if (row_scale == nullptr) return value;
      return value * row_scale->ElementAsFloat32(index / shape.back());
    }
  }
  return 0.0f;
}

std::vector<float> SafetensorsTensor::ToFloat32() const {
  std::vector<float> values(static_cast<size_t>(num_elements()));
  if (dtype == kernels::DType::kF32) {
    if (!values.empty()) std::memcpy(values.data(), data, values.size() * sizeof(float));
    return values;
  }
  for (size_t i = 0; i < values.size(); ++i) values[i] = ElementAsFloat32(static_cast<int64_t>(i));
  return values;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(
    const std::filesystem::path& path) {
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->source_ = path.string();
  const std::string& source = file->source_;

  FileDescriptor fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int error = errno;
    if (error == ENOENT) return absl::NotFoundError(absl::StrCat(source, ": no such file"));
    return absl::PermissionDeniedError(
        absl::StrCat(source, ": cannot be opened: ", std::strerror(error)));
  }
  struct stat info;
  if (fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": not a regular file"));
  }
  file->size_ = static_cast<uint64_t>(info.st_size);
  if (file->size_ < kLengthPrefixBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": ", file->size_,
                     " bytes is too short for a safetensors file (an 8-byte header length "
                     "comes first)"));
  }
  void* mapping = mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (mapping == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat(source, ": cannot be memory-mapped: ", std::strerror(errno)));
  }
  file->mapping_ = static_cast<const uint8_t*>(mapping);
  SLOTSERVE_RETURN_IF_ERROR(file->ParseHeader());
  SLOTSERVE_RETURN_IF_ERROR(file->LinkRowScales());
  return file;
}

SafetensorsFile::~SafetensorsFile() {
  if (mapping_ != nullptr) munmap(const_cast<uint8_t*>(mapping_), size_);
}

const SafetensorsTensor* SafetensorsFile::Find(std::string_view name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

absl::Status SafetensorsFile::ParseHeader() {
  uint64_t header_bytes = 0;
  for (uint64_t i = 0; i < kLengthPrefixBytes; ++i) {
    header_bytes |= static_cast<uint64_t>(mapping_[i]) << (8 * i);
  }
  if (header_bytes > kMaxHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": header length ", header_bytes,
                                                   " is over the ", kMaxHeaderBytes,
                                                   "-byte limit"));
  }
  if (header_bytes > size_ - kLengthPrefixBytes) {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": header length ", header_bytes,
                                                   " runs past the end of the ", size_,
                                                   "-byte file"));
  }
  const std::string_view header_text(reinterpret_cast<const char*>(mapping_ + kLengthPrefixBytes),
                                     header_bytes);
  const std::string header_source = absl::StrCat(source_, ": header");
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json header,
                             base::ParseJsonDocument(header_text, header_source));
  if (!header.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(header_source, " must be a JSON object, got ", base::JsonForMessage(header)));
  }

  const uint8_t* data_start = mapping_ + kLengthPrefixBytes + header_bytes;
  const uint64_t data_bytes = size_ - kLengthPrefixBytes - header_bytes;
  // Byte ranges [begin, end) with their tensor, to find overlaps once all are known.
  std::vector<std::pair<std::pair<uint64_t, uint64_t>, std::string>> ranges;

  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) {
        return absl::InvalidArgumentError(
            absl::StrCat(header_source, ": __metadata__ must be an object of strings"));
      }
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) {
          return absl::InvalidArgumentError(absl::StrCat(header_source, ": __metadata__.", key,
                                                         " must be a string, got ",
                                                         base::JsonForMessage(value)));
        }
      }
      continue;
    }
    const std::string where = absl::StrCat(source_, ": tensor ", name);
    if (!entry.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(where, " must be described by an object, got ",
                                                     base::JsonForMessage(entry)));
    }
    for (const auto& [key, value] : entry.items()) {
      if (key != "dtype" && key != "shape" && key != "data_offsets") {
        return absl::InvalidArgumentError(absl::StrCat(where, " has unknown key \"", key,
                                                       "\" (expected dtype, shape, data_offsets)"));
      }
    }
    for (const char* key : {"dtype", "shape", "data_offsets"}) {
      if (!entry.contains(key)) {
        return absl::InvalidArgumentError(absl::StrCat(where, " is missing \"", key, "\""));
      }
    }

    SafetensorsTensor tensor;
    tensor.name = name;
    const nlohmann::json& dtype = entry["dtype"];
    if (!dtype.is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " has dtype ", base::JsonForMessage(dtype), ", expected a string"));
    }
    auto parsed_dtype = ParseDType(dtype.get<std::string>());
    if (!parsed_dtype.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, " has dtype ", base::JsonForMessage(dtype), ", expected F32, F16, BF16 or I8"));
    }
    tensor.dtype = *parsed_dtype;

    const nlohmann::json& shape = entry["shape"];
    if (!shape.is_array()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " has shape ", base::JsonForMessage(shape), ", expected an array"));
    }
    // Element count, kept below the file size so that it cannot overflow.
    uint64_t elements = 1;
    for (const nlohmann::json& dim : shape) {
      uint64_t extent;
      if (!ReadUnsigned(dim, extent) ||
          extent > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, " has shape ", base::JsonForMessage(shape), ", expected non-negative integers"));
      }
      tensor.shape.push_back(static_cast<int64_t>(extent));
      if (extent != 0 && elements > data_bytes / extent)
        elements = data_bytes + 1;
      else
        elements *= extent;
    }

    const nlohmann::json& offsets = entry["data_offsets"];
    uint64_t begin = 0;
    uint64_t end = 0;
    if (!offsets.is_array() || offsets.size() != 2 || !ReadUnsigned(offsets[0], begin) ||
        !ReadUnsigned(offsets[1], end) || begin > end) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " has data_offsets ", base::JsonForMessage(offsets),
                       ", expected [begin, end] with 0 <= begin <= end"));
    }
    if (end > data_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(where, " has data_offsets [", begin, ", ", end,
                                                     "] past the end of the data (", data_bytes,
                                                     " bytes; is the file truncated?)"));
    }
    const uint64_t element_bytes = kernels::DTypeSize(tensor.dtype);
    if (elements > data_bytes || end - begin != elements * element_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " has ", end - begin, " bytes of data, but shape ",
                       ShapeString(tensor.shape), " of ", dtype.get<std::string>(), " needs ",
                       elements > data_bytes ? std::string("more than the file holds")
                                             : absl::StrCat(elements * element_bytes)));
    }
    tensor.data = data_start + begin;
    tensor.bytes = static_cast<int64_t>(end - begin);
    ranges.push_back({{begin, end}, name});
    tensors_.emplace(name, std::move(tensor));
  }

  // Sorted by start, a range overlaps an earlier one exactly when it starts before the furthest
  // end seen so far. Empty tensors occupy no bytes and cannot overlap anything.
  std::sort(ranges.begin(), ranges.end());
  const std::pair<std::pair<uint64_t, uint64_t>, std::string>* furthest = nullptr;
  for (const auto& range : ranges) {
    const auto& [begin, end] = range.first;
    if (begin == end) continue;
    if (furthest != nullptr && begin < furthest->first.second) {
      return absl::InvalidArgumentError(
          absl::StrCat(source_, ": tensors ", furthest->second, " and ", range.second,
                       " have overlapping data_offsets [", furthest->first.first, ", ",
                       furthest->first.second, ") and [", begin, ", ", end, ")"));
    }
    if (furthest == nullptr || end > furthest->first.second) furthest = &range;
  }
  return absl::OkStatus();
}

absl::Status SafetensorsFile::LinkRowScales() {
  for (auto& [name, tensor] : tensors_) {
    if (tensor.dtype != kernels::DType::kI8) continue;
    if (tensor.shape.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          source_, ": tensor ", name, " is I8 with shape ", ShapeString(tensor.shape),
          ": only matrices (2 dimensions) may be stored as int8, with per-row scales"));
    }
    const std::string scale_name = name + "_scale";
    auto found = tensors_.find(scale_name);
    if (found == tensors_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source_, ": tensor ", name, " is I8 but has no per-row scales: expected ",
                       scale_name, " (F32, shape [", tensor.shape[0], "])"));
    }
    SafetensorsTensor& scale = found->second;
    if (scale.dtype != kernels::DType::kF32 ||
        scale.shape != std::vector<int64_t>{tensor.shape[0]}) {
      return absl::InvalidArgumentError(
          absl::StrCat(source_, ": tensor ", scale_name, " is ", kernels::DTypeName(scale.dtype),
                       " ", ShapeString(scale.shape), ", expected F32 [", tensor.shape[0],
                       "]: the per-row scales of ", name));
    }
    scale.is_row_scale = true;
    tensor.row_scale = &scale;
  }
  return absl::OkStatus();
}

}  // namespace slotserve::models
