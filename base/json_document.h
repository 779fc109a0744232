// Strict JSON parsing (config.json, the safetensors header, HTTP request bodies):
// the text must be valid UTF-8 and no object may repeat a key, because a repeated key would
// silently override an earlier value.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace slotserve::base {

// Parses `text` as one JSON document. Errors are prefixed with `source` and say what was wrong:
// invalid UTF-8 (with the byte offset), a syntax error, or a repeated key.
absl::StatusOr<nlohmann::json> ParseJsonDocument(std::string_view text, const std::string& source);

// A JSON value as it would appear in a message, shortened when long.
std::string JsonForMessage(const nlohmann::json& value);

}  // namespace slotserve::base
