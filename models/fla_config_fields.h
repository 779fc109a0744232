// Typed, checked reads of an fla config.json's values after fla's defaults are merged in
// (models/fla_config.cc): every key the reader asks for is present, so a read only checks its
// type and range. Shared by the common keys and each mixer family's own (models/fla_mixer.h);
// every message is prefixed with the file and names the key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace slotserve::models {

class FlaConfigFields {
 public:
  // `values` and `source` must outlive this.
  FlaConfigFields(const nlohmann::json& values, const std::string& source)
      : values_(values), source_(source) {}

  absl::Status Error(const std::string& message) const;
  const nlohmann::json& operator[](const char* key) const { return values_.at(key); }
  // Whether the family's defaults hold `key` at all (a key of another family does not).
  bool Has(const char* key) const { return values_.contains(key); }
  bool IsNull(const char* key) const { return values_.at(key).is_null(); }

  absl::StatusOr<int> PositiveInt(const char* key, int64_t limit) const;
  absl::StatusOr<double> Number(const char* key) const;
  absl::StatusOr<std::optional<float>> NumberOrNull(const char* key) const;
  absl::StatusOr<bool> Flag(const char* key) const;
  // A token id: an integer in [0, vocab) or null (none, -1).
  absl::StatusOr<int> TokenId(const char* key, int vocab) const;

 private:
  const nlohmann::json& values_;
  const std::string& source_;
};

}  // namespace slotserve::models
