#include "base/json_document.h"

#include <cstdint>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/utf8.h"

namespace slotserve::base {
absl::StatusOr<nlohmann::json> ParseJsonDocument(std::string_view text, const std::string& source) {
  const size_t bad_byte = base::FirstInvalidUtf8Byte(text);
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

}  // namespace slotserve::base
