// The parts of config.json that the decoder-only format ("slotserve-lm", docs/MODEL_FORMAT.md) and
// the encoder–decoder format ("slotserve-seq2seq", §8) share, parsed by one piece of code so both
// refuse the same mistakes with the same messages.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/json_fields.h"
#include "models/model_config.h"
#include "nlohmann/json.hpp"

namespace slotserve::models {

// Upper bounds that keep every derived size (weights, state, scratch) far from integer
// overflow; real models of this family are orders of magnitude smaller.
inline constexpr int64_t kMaxVocab = 1 << 22;
inline constexpr int64_t kMaxWidth = 1 << 16;  // d_model, d_ffn
inline constexpr int64_t kMaxLayers = 1024;
inline constexpr int64_t kMaxPositionOffset = 1 << 24;

// The top-level keys of docs/MODEL_FORMAT.md other than format, format_version, n_layers and
// attention.
std::vector<std::string> SharedTopLevelKeys();

// Refuses a document that is not one JSON object.
absl::Status RequireJsonObject(const nlohmann::json& document, const std::string& source);

// "format" must be `format`, "format_version" must be `version`.
absl::Status ParseFormatKeys(base::JsonFields& fields, std::string_view format, int64_t version);

// Reads SharedTopLevelKeys() into `config` (all but n_layers and attention), with the checks
// between them (d_model a multiple of n_heads, token ids inside the vocabulary).
absl::Status ParseSharedTopLevelKeys(base::JsonFields& fields, ModelConfig& config);

// One §2 attention object. `path_prefix` names it in messages: "attention." or
// "decoder.attention.".
absl::Status ParseAttentionObject(const nlohmann::json& object, const std::string& source,
                                  const std::string& path_prefix, AttentionConfig& attention);

// config.json's "format" string, to choose the parser; "" when the file holds no string
// "format" (the parser then says what is wrong). Errors only for an unreadable or
// unparsable file.
absl::StatusOr<std::string> ReadConfigFormat(const std::filesystem::path& path);

// The text of a config file, refusing a missing or implausibly large one.
absl::StatusOr<std::string> ReadConfigFile(const std::filesystem::path& path);

}  // namespace slotserve::models
