#include "server/http/json_params.h"

#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/json_document.h"
#include "base/status_macros.h"
#include "server/http/openai_errors.h"

namespace slotserve::server::http {
namespace {

absl::Status TypeErrorAt(absl::string_view path, absl::string_view expected,
                         const nlohmann::json& value) {
  return ParamError(
      path, "invalid_type",
      absl::StrCat(path, " must be ", expected, ", got ", base::JsonForMessage(value)));
}

}  // namespace

bool IsIntegral(const nlohmann::json& value) {
  if (value.is_number_integer()) return true;
  if (!value.is_number_float()) return false;
  const double number = value.get<double>();
  return std::isfinite(number) && number == std::trunc(number) && std::fabs(number) < 0x1p63;
}

JsonParams::JsonParams(const nlohmann::json& object, std::string path)
    : object_(object), path_(std::move(path)) {}

std::string JsonParams::PathOf(absl::string_view name) const {
  return path_.empty() ? std::string(name) : absl::StrCat(path_, ".", name);
}

absl::Status JsonParams::TypeError(absl::string_view name, absl::string_view expected,
                                   const nlohmann::json& value) const {
  return TypeErrorAt(PathOf(name), expected, value);
}

const nlohmann::json* JsonParams::Get(absl::string_view name) {
  known_.emplace(name);
  const auto found = object_.find(name);
  if (found == object_.end() || found->is_null()) return nullptr;
  return &*found;
}

absl::Status JsonParams::Float(absl::string_view name, float* out) {
  const nlohmann::json* value = Get(name);
  if (value == nullptr) return absl::OkStatus();
  if (!value->is_number()) return TypeError(name, "a number", *value);
  *out = static_cast<float>(value->get<double>());
  return absl::OkStatus();
}

absl::Status JsonParams::Int(absl::string_view name, int64_t* out, int64_t min, int64_t max) {
  const nlohmann::json* value = Get(name);
  if (value == nullptr) return absl::OkStatus();
  const bool too_large =
      value->is_number_unsigned() && value->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX);
  if (!IsIntegral(*value) || too_large) {
    return TypeError(name,
                     min == INT64_MIN && max == INT64_MAX
                         ? "an integer"
                         : absl::StrCat("an integer in [", min, ", ", max, "]"),
                     *value);
  }
  const int64_t number =
      value->is_number_float() ? static_cast<int64_t>(value->get<double>()) : value->get<int64_t>();
  if (number < min || number > max) {
    return TypeError(name, absl::StrCat("an integer in [", min, ", ", max, "]"), *value);
  }
  *out = number;
  return absl::OkStatus();
}

absl::Status JsonParams::Int32(absl::string_view name, int32_t* out) {
  int64_t number = *out;
  SLOTSERVE_RETURN_IF_ERROR(
      Int(name, &number, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
  *out = static_cast<int32_t>(number);
  return absl::OkStatus();
}

absl::Status JsonParams::Uint64(absl::string_view name, uint64_t* out) {
  const nlohmann::json* value = Get(name);
  if (value == nullptr) return absl::OkStatus();
  if (value->is_number_unsigned()) {
    *out = value->get<uint64_t>();
  } else if (IsIntegral(*value)) {
    *out =
        static_cast<uint64_t>(value->is_number_float() ? static_cast<int64_t>(value->get<double>())
                                                       : value->get<int64_t>());
  } else {
    return TypeError(name, "an integer", *value);
  }
  return absl::OkStatus();
}

absl::Status JsonParams::Bool(absl::string_view name, bool* out) {
  const nlohmann::json* value = Get(name);
  if (value == nullptr) return absl::OkStatus();
  if (!value->is_boolean()) return TypeError(name, "true or false", *value);
  *out = value->get<bool>();
  return absl::OkStatus();
}

absl::Status JsonParams::String(absl::string_view name, std::string* out) {
  const nlohmann::json* value = Get(name);
  if (value == nullptr) return absl::OkStatus();
  if (!value->is_string()) return TypeError(name, "a string", *value);
  *out = value->get<std::string>();
  return absl::OkStatus();
}

absl::Status JsonParams::Strings(absl::string_view name, std::vector<std::string>* out) {
  const nlohmann::json* value = Get(name);
  if (value == nullptr) return absl::OkStatus();
  if (value->is_string()) {
    *out = {value->get<std::string>()};
    return absl::OkStatus();
  }
  if (!value->is_array()) return TypeError(name, "a string or an array of strings", *value);
  std::vector<std::string> strings;
  for (size_t i = 0; i < value->size(); ++i) {
    if (!(*value)[i].is_string()) {
      return TypeError(absl::StrCat(name, "[", i, "]"), "a string", (*value)[i]);
    }
    strings.push_back((*value)[i].get<std::string>());
  }
  *out = std::move(strings);
  return absl::OkStatus();
}

absl::Status JsonParams::Int32s(absl::string_view name, std::vector<int32_t>* out) {
  const nlohmann::json* value = Get(name);
  if (value == nullptr) return absl::OkStatus();
  return ReadInt32Array(*value, PathOf(name), out);
}

absl::Status ReadInt32Array(const nlohmann::json& value, absl::string_view path,
                            std::vector<int32_t>* out) {
  if (!value.is_array()) return TypeErrorAt(path, "an array of integers", value);
  std::vector<int32_t> numbers;
  for (size_t i = 0; i < value.size(); ++i) {
    const nlohmann::json& item = value[i];
    if (!IsIntegral(item) || item.get<double>() < std::numeric_limits<int32_t>::min() ||
        item.get<double>() > std::numeric_limits<int32_t>::max()) {
      return TypeErrorAt(absl::StrCat(path, "[", i, "]"), "a 32-bit integer", item);
    }
    numbers.push_back(static_cast<int32_t>(item.get<double>()));
  }
  *out = std::move(numbers);
  return absl::OkStatus();
}

absl::Status JsonParams::CheckAllKnown() const {
  for (const auto& [name, value] : object_.items()) {
    if (known_.count(name) > 0) continue;
    const std::string path = PathOf(name);
    return ParamError(
        path, "unknown_parameter",
        absl::StrCat("unknown parameter ", path, " (got ", base::JsonForMessage(value),
                     "); see the server's README for the parameters it supports"));
  }
  return absl::OkStatus();
}

}  // namespace slotserve::server::http
