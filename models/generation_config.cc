#include "models/generation_config.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "base/json_document.h"
#include "base/json_fields.h"
#include "base/status_macros.h"
#include "models/shared_config_keys.h"

namespace slotserve::models {

using base::JsonFields;
using base::JsonForMessage;
using base::ParseJsonDocument;
namespace {

// eos_token_id: one id or a non-empty list of ids, each in the vocabulary.
absl::StatusOr<std::vector<int32_t>> ReadEosTokenIds(const nlohmann::json& value,
                                                     const JsonFields& fields, int vocab_size) {
  const std::string expected =
      absl::StrCat("must be a token id in [0, ", vocab_size, ") or a list of them, got ");
  std::vector<const nlohmann::json*> items;
  if (value.is_array()) {
    if (value.empty()) return fields.Error("eos_token_id", absl::StrCat(expected, "[]"));
    for (const nlohmann::json& item : value) items.push_back(&item);
  } else {
    items.push_back(&value);
  }
  std::vector<int32_t> ids;
  for (size_t i = 0; i < items.size(); ++i) {
    const nlohmann::json& item = *items[i];
    const bool valid =
        item.is_number_integer() && item.get<int64_t>() >= 0 && item.get<int64_t>() < vocab_size;
    if (!valid) {
      const std::string where = value.is_array() ? absl::StrCat("[", i, "]") : "";
      return fields.Error(absl::StrCat("eos_token_id", where),
                          absl::StrCat(expected, JsonForMessage(item)));
    }
    ids.push_back(static_cast<int32_t>(item.get<int64_t>()));
  }
  return ids;
}

// A float key in [min, max] (`min_open`: min itself excluded); `range` says so in the message.
absl::StatusOr<std::optional<float>> ReadFloat(JsonFields& fields, const nlohmann::json& document,
                                               const std::string& key, double min, bool min_open,
                                               double max, const std::string& range) {
  if (!document.contains(key) || document.at(key).is_null()) return std::nullopt;
  SLOTSERVE_ASSIGN_OR_RETURN(const double number, fields.Number(key));
  // Checked as the float it becomes: 1e-50 is > 0 but rounds to 0.
  const float value = static_cast<float>(number);
  if (value < min || (min_open && value == min) || value > max) {
    return fields.Error(
        key, absl::StrCat("must be ", range, ", got ", JsonForMessage(document.at(key))));
  }
  return value;
}

}  // namespace

absl::StatusOr<GenerationConfig> ParseGenerationConfig(const std::string& text,
                                                       const std::string& source, int vocab_size) {
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json document, ParseJsonDocument(text, source));
  if (!document.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": must be a JSON object, got ", JsonForMessage(document)));
  }
  JsonFields fields(document, source, "");
  auto present = [&](const char* key) {
    return document.contains(key) && !document.at(key).is_null();
  };
  GenerationConfig config;
  if (present("eos_token_id")) {
    SLOTSERVE_ASSIGN_OR_RETURN(config.eos_token_ids,
                               ReadEosTokenIds(document.at("eos_token_id"), fields, vocab_size));
  }
  if (present("do_sample")) {
    SLOTSERVE_ASSIGN_OR_RETURN(config.do_sample, fields.Bool("do_sample"));
  }
  if (present("top_k")) {
    SLOTSERVE_ASSIGN_OR_RETURN(const int64_t top_k, fields.Integer("top_k", 0, INT32_MAX));
    config.top_k = static_cast<int32_t>(top_k);
  }
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  SLOTSERVE_ASSIGN_OR_RETURN(
      config.temperature, ReadFloat(fields, document, "temperature", 0, false, kFloatMax, ">= 0"));
  SLOTSERVE_ASSIGN_OR_RETURN(config.top_p,
                             ReadFloat(fields, document, "top_p", 0, true, 1, "in (0, 1]"));
  SLOTSERVE_ASSIGN_OR_RETURN(config.min_p,
                             ReadFloat(fields, document, "min_p", 0, false, 1, "in [0, 1]"));
  SLOTSERVE_ASSIGN_OR_RETURN(
      config.repetition_penalty,
      ReadFloat(fields, document, "repetition_penalty", 0, true, kFloatMax, "> 0"));
  return config;
}

absl::StatusOr<std::optional<GenerationConfig>> LoadGenerationConfig(
    const std::filesystem::path& model_dir, int vocab_size) {
  const std::filesystem::path path = model_dir / "generation_config.json";
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return std::nullopt;
  SLOTSERVE_ASSIGN_OR_RETURN(const std::string text, ReadConfigFile(path));
  SLOTSERVE_ASSIGN_OR_RETURN(GenerationConfig config,
                             ParseGenerationConfig(text, path.string(), vocab_size));
  return config;
}

}  // namespace slotserve::models
