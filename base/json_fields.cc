#include "base/json_fields.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/json_document.h"
#include "base/status_macros.h"

namespace slotserve::base {

JsonFields::JsonFields(const nlohmann::json& object, std::string source, std::string path_prefix)
    : object_(object), source_(std::move(source)), path_prefix_(std::move(path_prefix)) {}

absl::Status JsonFields::Error(const std::string& key, const std::string& what) const {
  return absl::InvalidArgumentError(absl::StrCat(source_, ": ", path_prefix_, key, " ", what));
}

absl::StatusOr<const nlohmann::json*> JsonFields::Get(const std::string& key) {
  auto it = object_.find(key);
  if (it == object_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ": missing key \"", path_prefix_, key, "\""));
  }
  return &*it;
}

absl::StatusOr<int64_t> JsonFields::Integer(const std::string& key, int64_t min, int64_t max) {
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json* value, Get(key));
  const nlohmann::json& json = *value;
  int64_t number;
  if (json.is_number_unsigned()) {
    const uint64_t unsigned_value = json.get<uint64_t>();
    number = unsigned_value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                 ? std::numeric_limits<int64_t>::max()
                 : static_cast<int64_t>(unsigned_value);
  } else if (json.is_number_integer()) {
    number = json.get<int64_t>();
  } else {
    return Error(key, absl::StrCat("must be an integer, got ", JsonForMessage(json)));
  }
  if (number < min) {
    if (min == 1) return Error(key, absl::StrCat("must be > 0, got ", JsonForMessage(json)));
    return Error(key, absl::StrCat("must be >= ", min, ", got ", JsonForMessage(json)));
  }
  if (number > max) {
    return Error(key, absl::StrCat("must be <= ", max, ", got ", JsonForMessage(json)));
  }
  return number;
}

absl::StatusOr<double> JsonFields::Number(const std::string& key) {
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json* value, Get(key));
  const nlohmann::json& json = *value;
  if (!json.is_number()) {
    return Error(key, absl::StrCat("must be a number, got ", JsonForMessage(json)));
  }
  const double number = json.get<double>();
  if (!std::isfinite(number) ||
      std::fabs(number) > static_cast<double>(std::numeric_limits<float>::max())) {
    return Error(key, absl::StrCat("must be a finite float32 number, got ", JsonForMessage(json)));
  }
  return number;
}

absl::StatusOr<bool> JsonFields::Bool(const std::string& key) {
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json* value, Get(key));
  if (!value->is_boolean()) {
    return Error(key, absl::StrCat("must be true or false, got ", JsonForMessage(*value)));
  }
  return value->get<bool>();
}

absl::StatusOr<std::string> JsonFields::String(const std::string& key) {
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json* value, Get(key));
  if (!value->is_string()) {
    return Error(key, absl::StrCat("must be a string, got ", JsonForMessage(*value)));
  }
  return value->get<std::string>();
}

absl::StatusOr<int> JsonFields::Choice(const std::string& key,
                                       const std::vector<std::string>& choices) {
  SLOTSERVE_ASSIGN_OR_RETURN(const std::string value, String(key));
  for (size_t i = 0; i < choices.size(); ++i) {
    if (value == choices[i]) return static_cast<int>(i);
  }
  return Error(key, absl::StrCat("must be one of \"", absl::StrJoin(choices, "\", \""), "\", got ",
                                 JsonForMessage(value)));
}

absl::StatusOr<const nlohmann::json*> JsonFields::Object(const std::string& key) {
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json* value, Get(key));
  if (!value->is_object()) {
    return Error(key, absl::StrCat("must be an object, got ", JsonForMessage(*value)));
  }
  return value;
}

absl::StatusOr<const nlohmann::json*> JsonFields::ObjectOrNull(const std::string& key) {
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json* value, Get(key));
  if (value->is_null()) return nullptr;
  if (!value->is_object()) {
    return Error(key, absl::StrCat("must be an object or null, got ", JsonForMessage(*value)));
  }
  return value;
}

absl::Status JsonFields::RefuseUnknownKeys(const std::vector<std::string>& known,
                                           const std::string& context) const {
  for (const auto& [key, value] : object_.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source_, ": unknown key \"", path_prefix_, key, "\"", context));
    }
  }
  return absl::OkStatus();
}

}  // namespace slotserve::base
