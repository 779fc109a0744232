#include "models/json_document.h"

#include <cstdint>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace slotserve::models {
namespace {

// Offset of the first byte that is not part of a well-formed UTF-8 sequence, or npos.
size_t FirstInvalidUtf8Byte(std::string_view text) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  const size_t size = text.size();
  size_t i = 0;
  while (i < size) {
    const uint8_t lead = bytes[i];
    if (lead < 0x80) {
      ++i;
      continue;
    }
    int continuation;
    uint32_t min_code_point;
    uint32_t code_point;
    if ((lead & 0xE0) == 0xC0) {
      continuation = 1;
      min_code_point = 0x80;
      code_point = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      continuation = 2;
      min_code_point = 0x800;
      code_point = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      continuation = 3;
      min_code_point = 0x10000;
      code_point = lead & 0x07;
    } else {
      return i;
    }
    if (size - i <= static_cast<size_t>(continuation)) return i;
    for (int c = 1; c <= continuation; ++c) {
      const uint8_t byte = bytes[i + c];
      if ((byte & 0xC0) != 0x80) return i;
      code_point = (code_point << 6) | (byte & 0x3F);
    }
    if (code_point < min_code_point || code_point > 0x10FFFF ||
        (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      return i;
    }
    i += continuation + 1;
  }
  return std::string_view::npos;
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  return FirstInvalidUtf8Byte(text) == std::string_view::npos;
}

absl::StatusOr<nlohmann::json> ParseJsonDocument(std::string_view text, const std::string& source) {
  const size_t bad_byte = FirstInvalidUtf8Byte(text);
  if (bad_byte != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not valid UTF-8 (bad byte at offset ", bad_byte, ")"));
  }
  // One set of seen keys per open object, innermost last.
  std::vector<std::set<std::string>> open_objects;
  std::string repeated_key;
  auto watch_keys = [&](int /*depth*/, nlohmann::json::parse_event_t event,
                        nlohmann::json& parsed) {
    switch (event) {
      case nlohmann::json::parse_event_t::object_start:
        open_objects.emplace_back();
        break;
      case nlohmann::json::parse_event_t::object_end:
        if (!open_objects.empty()) open_objects.pop_back();
        break;
      case nlohmann::json::parse_event_t::key:
        if (!open_objects.empty() &&
            !open_objects.back().insert(parsed.get<std::string>()).second && repeated_key.empty()) {
          repeated_key = parsed.get<std::string>();
        }
        break;
      default:
        break;
    }
    return true;
  };
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text.begin(), text.end(), watch_keys);
  } catch (const nlohmann::json::exception& error) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": not valid JSON: ", error.what()));
  }
  if (!repeated_key.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": key \"", repeated_key, "\" appears more than once in one object"));
  }
  return document;
}

std::string JsonForMessage(const nlohmann::json& value) {
  constexpr size_t kMaxChars = 60;
  std::string text = value.dump(-1, ' ', /*ensure_ascii=*/true);
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return text;
}

}  // namespace slotserve::models
