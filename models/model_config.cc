#include "models/model_config.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/json_document.h"
#include "base/json_fields.h"
#include "base/status_macros.h"
#include "models/shared_config_keys.h"

namespace slotserve::models {
namespace {

constexpr char kFormat[] = "slotserve-lm";
constexpr int64_t kFormatVersion = 1;

absl::StatusOr<ModelConfig> ParseConfigObject(const nlohmann::json& document,
                                              const std::string& source) {
  SLOTSERVE_RETURN_IF_ERROR(RequireJsonObject(document, source));
  base::JsonFields fields(document, source, "");
  std::vector<std::string> known_keys = SharedTopLevelKeys();
  known_keys.insert(known_keys.end(), {"format", "format_version", "n_layers", "attention"});
  SLOTSERVE_RETURN_IF_ERROR(fields.RefuseUnknownKeys(known_keys));
  SLOTSERVE_RETURN_IF_ERROR(ParseFormatKeys(fields, kFormat, kFormatVersion));

  ModelConfig config;
  SLOTSERVE_RETURN_IF_ERROR(ParseSharedTopLevelKeys(fields, config));
  SLOTSERVE_ASSIGN_OR_RETURN(config.n_layers, fields.Integer("n_layers", 1, kMaxLayers));
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json* attention, fields.Object("attention"));
  SLOTSERVE_RETURN_IF_ERROR(
      ParseAttentionObject(*attention, source, "attention.", config.attention));
  return config;
}

}  // namespace

absl::StatusOr<ModelConfig> ParseModelConfig(const std::string& json_text,
                                             const std::string& source) {
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json document,
                             base::ParseJsonDocument(json_text, source));
  return ParseConfigObject(document, source);
}

absl::StatusOr<ModelConfig> LoadModelConfig(const std::filesystem::path& path) {
  SLOTSERVE_ASSIGN_OR_RETURN(const std::string text, ReadConfigFile(path));
  return ParseModelConfig(text, path.string());
}

}  // namespace slotserve::models
