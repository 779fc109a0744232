#include "models/weight_shards.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/json_document.h"
#include "base/status_macros.h"
#include "models/shared_config_keys.h"
#include "nlohmann/json.hpp"

namespace slotserve::models {
namespace {

// A shard must be a file inside the directory: a name from the index is never a path.
bool IsPlainFileName(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos && name[0] != '.';
}

// An index is a few hundred bytes per tensor; ReadConfigFile's 1 MiB bound covers models with
// thousands of tensors.
absl::StatusOr<std::map<std::string, std::string>> ReadWeightMap(
    const std::filesystem::path& path) {
  SLOTSERVE_ASSIGN_OR_RETURN(const std::string text, ReadConfigFile(path));
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json index,
                             base::ParseJsonDocument(text, path.string()));
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path.string(), ": expected a JSON object with a \"weight_map\" object"));
  }
  std::map<std::string, std::string> weight_map;
  for (const auto& [tensor, shard] : index["weight_map"].items()) {
    if (!shard.is_string() || !IsPlainFileName(shard.get<std::string>())) {
      return absl::InvalidArgumentError(
          absl::StrCat(path.string(), ": weight_map[\"", tensor, "\"] must name a file inside ",
                       "the directory, got ", base::JsonForMessage(shard)));
    }
    weight_map[tensor] = shard.get<std::string>();
  }
  if (weight_map.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path.string(), ": weight_map is empty"));
  }
  return weight_map;
}

}  // namespace

absl::StatusOr<WeightShards> WeightShards::Open(const std::filesystem::path& dir) {
  WeightShards shards;
  std::error_code error;
  const std::filesystem::path single = dir / kSingleFile;
  const std::filesystem::path index = dir / kIndexFile;
  std::map<std::string, std::string> weight_map;  // tensor -> shard
  std::set<std::string> files;
  if (std::filesystem::exists(single, error)) {
    files.insert(kSingleFile);
    shards.source_ = single.string();
  } else if (std::filesystem::exists(index, error)) {
    SLOTSERVE_ASSIGN_OR_RETURN(weight_map, ReadWeightMap(index));
    for (const auto& [tensor, shard] : weight_map) files.insert(shard);
    shards.source_ = index.string();
  } else {
    return absl::NotFoundError(
        absl::StrCat(dir.string(), ": neither ", kSingleFile, " nor ", kIndexFile, " exists"));
  }
  for (const std::string& name : files) {
    const std::filesystem::path path = dir / name;
    SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> file, SafetensorsFile::Open(path));
    std::vector<std::string> unlisted;
    for (const auto& [tensor_name, tensor] : file->tensors()) {
      if (tensor.is_row_scale) continue;
      if (!weight_map.empty()) {
        const auto listed = weight_map.find(tensor_name);
        if (listed == weight_map.end() || listed->second != name) {
          unlisted.push_back(tensor_name);
          continue;
        }
      }
      if (!shards.tensors_.emplace(tensor_name, &tensor).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(path.string(), ": tensor ", tensor_name, " is also in another shard"));
      }
    }
    if (!unlisted.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          index.string(), ": shard ", name,
          " holds tensor(s) the index does not list there: ", absl::StrJoin(unlisted, ", ")));
    }
    shards.files_.push_back(path);
    shards.shards_.push_back(std::move(file));
  }
  std::vector<std::string> absent;
  for (const auto& [tensor, shard] : weight_map) {
    if (!shards.tensors_.contains(tensor)) absent.push_back(absl::StrCat(tensor, " (", shard, ")"));
  }
  if (!absent.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(index.string(),
                     ": listed tensor(s) missing from their shard: ", absl::StrJoin(absent, ", ")));
  }
  return shards;
}

const SafetensorsTensor* WeightShards::Find(std::string_view name) const {
  const auto found = tensors_.find(name);
  return found == tensors_.end() ? nullptr : found->second;
}

}  // namespace slotserve::models
