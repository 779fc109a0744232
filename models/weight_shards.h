// The weights of a Hugging Face model directory: one model.safetensors, or the shards
// model-0000i-of-0000n.safetensors that model.safetensors.index.json lists (`{"metadata":
// {...}, "weight_map": {tensor: shard}}`). Like transformers, a single file wins over an index.
// Every shard is memory-mapped and checked as SafetensorsFile checks one file; the index must
// list exactly the tensors each shard holds, and no tensor may appear in two shards.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "models/safetensors_file.h"

namespace slotserve::models {

class WeightShards {
 public:
  static constexpr const char* kSingleFile = "model.safetensors";
  static constexpr const char* kIndexFile = "model.safetensors.index.json";

  static absl::StatusOr<WeightShards> Open(const std::filesystem::path& dir);

  // Every tensor of every shard by name (row scales of int8 matrices excluded, as in
  // SafetensorsFile they belong to their matrix).
  const std::map<std::string, const SafetensorsTensor*, std::less<>>& tensors() const {
    return tensors_;
  }
  const SafetensorsTensor* Find(std::string_view name) const;
  // The files read, in the order opened (one, or the shards by name).
  const std::vector<std::filesystem::path>& files() const { return files_; }
  // What messages call the weights: the single file, or the index.
  const std::string& source() const { return source_; }

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> shards_;
  std::map<std::string, const SafetensorsTensor*, std::less<>> tensors_;
  std::vector<std::filesystem::path> files_;
  std::string source_;
};

}  // namespace slotserve::models
