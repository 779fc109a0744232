// The tokenizer keys of a Hub directory's tokenizer_config.json and special_tokens_map.json
// (both optional): bos_token / eos_token (a string or {"content": ...}; tokenizer_config.json
// wins), add_bos_token / add_eos_token, model_max_length. The chat template is read elsewhere.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace slotserve::engine::hf {

struct TokenizerConfig {
  static constexpr std::string_view kFileName = "tokenizer_config.json";
  static constexpr std::string_view kSpecialTokensFileName = "special_tokens_map.json";

  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  std::optional<bool> add_bos_token;
  std::optional<bool> add_eos_token;
  int64_t model_max_length = 0;  // 0: not given, or transformers' "no limit" sentinel

  // Reads the two files in `dir` where present. INVALID_ARGUMENT, naming the file and key,
  // when one is not JSON or a key has the wrong type.
  static absl::StatusOr<TokenizerConfig> LoadFromDir(const std::filesystem::path& dir);
};

}  // namespace slotserve::engine::hf
