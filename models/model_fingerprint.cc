#include "models/model_fingerprint.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <span>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "models/safetensors_file.h"
#include "models/weight_shards.h"

namespace slotserve::models {
namespace {

absl::StatusOr<std::string> ReadPrefix(const std::filesystem::path& path, uint64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path.string(), ": cannot open"));
  std::string bytes(max_bytes, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(max_bytes));
  bytes.resize(static_cast<size_t>(in.gcount()));
  return bytes;
}

// Hashes one weights file: its header as stored, then a sample of every tensor's data.
absl::Status HashWeightsFile(const std::filesystem::path& weights_path, base::Sha256& hash) {
  SLOTSERVE_ASSIGN_OR_RETURN(std::string length_field, ReadPrefix(weights_path, 8));
  if (length_field.size() != 8) {
    return absl::InvalidArgumentError(
        absl::StrCat(weights_path.string(), ": shorter than 8 bytes"));
  }
  uint64_t header_bytes;
  std::memcpy(&header_bytes, length_field.data(), 8);
  if (header_bytes > SafetensorsFile::kMaxHeaderBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(weights_path.string(), ": header of ", header_bytes, " bytes is too long"));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(std::string header, ReadPrefix(weights_path, 8 + header_bytes));
  hash.Update(header);
  SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> file,
                             SafetensorsFile::Open(weights_path));
  constexpr int64_t kSample = 4096;
  for (const auto& [name, tensor] : file->tensors()) {
    const int64_t head = std::min(kSample, tensor.bytes);
    hash.Update(std::span(tensor.data, static_cast<size_t>(head)));
    const int64_t tail = std::min(kSample, tensor.bytes - head);
    hash.Update(std::span(tensor.data + tensor.bytes - tail, static_cast<size_t>(tail)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<base::Digest> ModelFingerprint(const std::filesystem::path& model_dir) {
  const std::filesystem::path config_path = model_dir / "config.json";
  SLOTSERVE_ASSIGN_OR_RETURN(std::string config, ReadPrefix(config_path, 1u << 20));
  base::Sha256 hash;
  hash.Update(std::string_view("slotserve model fingerprint v1\n"));
  hash.Update(std::to_string(config.size()) + "\n");
  hash.Update(config);
  std::error_code error;
  if (!std::filesystem::exists(model_dir / WeightShards::kSingleFile, error) &&
      std::filesystem::exists(model_dir / WeightShards::kIndexFile, error)) {
    // Sharded weights (fla checkpoints): every shard in name order, as WeightShards reads them.
    SLOTSERVE_ASSIGN_OR_RETURN(const WeightShards shards, WeightShards::Open(model_dir));
    for (const std::filesystem::path& shard : shards.files()) {
      SLOTSERVE_RETURN_IF_ERROR(HashWeightsFile(shard, hash));
    }
    return hash.Finish();
  }
  SLOTSERVE_RETURN_IF_ERROR(HashWeightsFile(model_dir / WeightShards::kSingleFile, hash));
  return hash.Finish();
}

}  // namespace slotserve::models
