#include "models/safetensors_writer.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace slotserve::models {

absl::Status WriteSafetensors(const std::filesystem::path& path,
                              const std::vector<TensorToWrite>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const TensorToWrite& tensor : tensors) {
    int64_t elements = 1;
    for (int64_t extent : tensor.shape) elements *= extent;
    const uint64_t expected = static_cast<uint64_t>(elements) * kernels::DTypeSize(tensor.dtype);
    if (tensor.bytes.size() != expected) {
      return absl::InternalError(absl::StrCat("WriteSafetensors: tensor ", tensor.name, " has ",
                                              tensor.bytes.size(), " bytes, its shape needs ",
                                              expected));
    }
    header[tensor.name] = {{"dtype", kernels::DTypeName(tensor.dtype)},
                           {"shape", tensor.shape},
                           {"data_offsets", {offset, offset + tensor.bytes.size()}}};
    offset += tensor.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return absl::PermissionDeniedError(absl::StrCat(path.string(), ": cannot be created"));
  char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<char>((text.size() >> (8 * i)) & 0xFF);
  file.write(length, 8);
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const TensorToWrite& tensor : tensors) {
    file.write(tensor.bytes.data(), static_cast<std::streamsize>(tensor.bytes.size()));
  }
  file.close();
  if (!file) return absl::DataLossError(absl::StrCat(path.string(), ": write failed"));
  return absl::OkStatus();
}

}  // namespace slotserve::models
