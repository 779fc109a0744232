#include "models/fla_config_fields.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/json_document.h"
#include "base/status_macros.h"

namespace slotserve::models {

absl::Status FlaConfigFields::Error(const std::string& message) const {
  return absl::InvalidArgumentError(absl::StrCat(source_, ": ", message));
}

absl::StatusOr<int> FlaConfigFields::PositiveInt(const char* key, int64_t limit) const {
  const nlohmann::json& v = values_.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > limit) {
    return Error(absl::StrCat(key, " must be a positive integer (at most ", limit, "), got ",
                              base::JsonForMessage(v)));
  }
  return static_cast<int>(v.get<int64_t>());
}

absl::StatusOr<double> FlaConfigFields::Number(const char* key) const {
  const nlohmann::json& v = values_.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>())) {
    return Error(absl::StrCat(key, " must be a number, got ", base::JsonForMessage(v)));
  }
  return v.get<double>();
}

absl::StatusOr<std::optional<float>> FlaConfigFields::NumberOrNull(const char* key) const {
  if (IsNull(key)) return std::optional<float>();
  SLOTSERVE_ASSIGN_OR_RETURN(const double value, Number(key));
  return std::optional<float>(static_cast<float>(value));
}

absl::StatusOr<bool> FlaConfigFields::Flag(const char* key) const {
  const nlohmann::json& v = values_.at(key);
  if (!v.is_boolean()) {
    return Error(absl::StrCat(key, " must be true or false, got ", base::JsonForMessage(v)));
  }
  return v.get<bool>();
}

absl::StatusOr<int> FlaConfigFields::TokenId(const char* key, int vocab) const {
  const nlohmann::json& v = values_.at(key);
  if (v.is_null()) return -1;
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= vocab) {
    return Error(absl::StrCat(key, " must be null or a token id in [0, ", vocab, "), got ",
                              base::JsonForMessage(v)));
  }
  return static_cast<int>(v.get<int64_t>());
}

}  // namespace slotserve::models
