#include "engine/hf_tokenizer_config.h"

#include <fstream>
#include <sstream>
#include <system_error>

#include "engine/hf_json.h"

namespace slotserve::engine::hf {
namespace {

// The file's JSON object; null when the file does not exist.
absl::StatusOr<Json> ReadJsonObject(const std::filesystem::path& file) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) return Json();
  std::ifstream in(file, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  Json value = Json::parse(buffer.str(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_object()) {
    return absl::InvalidArgumentError(Cat(file.string(), ": not a JSON object"));
  }
  return value;
}

// A token given as "text" or {"content": "text", ...}; nullopt when absent or null.
absl::StatusOr<std::optional<std::string>> TokenField(const Json& object, std::string_view key,
                                                      const std::filesystem::path& file) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::optional<std::string>();
  if (it->is_string()) return std::optional<std::string>(it->get<std::string>());
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    return std::optional<std::string>((*it)["content"].get<std::string>());
  }
  return absl::InvalidArgumentError(
      Cat(file.string(), ": ", key, " must be a string or {\"content\": \"...\"}"));
}

absl::Status ReadTokens(const Json& object, const std::filesystem::path& file,
                        TokenizerConfig* config) {
  for (auto [key, slot] :
       {std::pair{"bos_token", &config->bos_token}, std::pair{"eos_token", &config->eos_token}}) {
    if (slot->has_value()) continue;  // tokenizer_config.json, read first, wins
    absl::StatusOr<std::optional<std::string>> token = TokenField(object, key, file);
    if (!token.ok()) return token.status();
    *slot = *token;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TokenizerConfig> TokenizerConfig::LoadFromDir(const std::filesystem::path& dir) {
  TokenizerConfig config;
  const std::filesystem::path config_file = dir / kFileName;
  absl::StatusOr<Json> main = ReadJsonObject(config_file);
  if (!main.ok()) return main.status();
  if (main->is_object()) {
    absl::Status tokens = ReadTokens(*main, config_file, &config);
    if (!tokens.ok()) return tokens;
    for (auto [key, slot] : {std::pair{"add_bos_token", &config.add_bos_token},
                             std::pair{"add_eos_token", &config.add_eos_token}}) {
      const auto it = main->find(key);
      if (it == main->end() || it->is_null()) continue;
      if (!it->is_boolean()) {
        return absl::InvalidArgumentError(
            Cat(config_file.string(), ": ", key, " must be true or false"));
      }
      *slot = it->get<bool>();
    }
    const auto length = main->find("model_max_length");
    if (length != main->end() && !length->is_null()) {
      if (!length->is_number() || length->get<double>() < 1) {
        return absl::InvalidArgumentError(
            Cat(config_file.string(), ": model_max_length must be a positive number"));
      }
      // transformers writes 1e30 for "no limit".
      const double value = length->get<double>();
      config.model_max_length = value >= 1e18 ? 0 : static_cast<int64_t>(value);
    }
  }
  const std::filesystem::path map_file = dir / kSpecialTokensFileName;
  absl::StatusOr<Json> map = ReadJsonObject(map_file);
  if (!map.ok()) return map.status();
  if (map->is_object()) {
    absl::Status tokens = ReadTokens(*map, map_file, &config);
    if (!tokens.ok()) return tokens;
  }
  return config;
}

}  // namespace slotserve::engine::hf
