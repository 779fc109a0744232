// Typed, checked access to the members of one JSON object. Messages name the key by its full
// path ("attention.slots") and are prefixed with the source file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace slotserve::base {

class JsonFields {
 public:
  // `object` must outlive this. `path_prefix` is "" at the top level, "attention." inside it.
  JsonFields(const nlohmann::json& object, std::string source, std::string path_prefix);

  // Whether the object has `key`: for the optional keys (everything else is required).
  bool Has(const std::string& key) const { return object_.contains(key); }

  absl::StatusOr<int64_t> Integer(const std::string& key, int64_t min, int64_t max);
  absl::StatusOr<double> Number(const std::string& key);
  absl::StatusOr<bool> Bool(const std::string& key);
  absl::StatusOr<std::string> String(const std::string& key);
  // One of `choices`; returns its index.
  absl::StatusOr<int> Choice(const std::string& key, const std::vector<std::string>& choices);
  absl::StatusOr<const nlohmann::json*> Object(const std::string& key);
  // An object, or null for an explicit JSON null (the key itself is still required).
  absl::StatusOr<const nlohmann::json*> ObjectOrNull(const std::string& key);

  // Refuses the first key that is not in `known`, before any value is read, so that a typo is
  // reported as such rather than as the missing key it was meant to be. `context` is appended
  // to the message (e.g. " for attention.kind \"rfa\"").
  absl::Status RefuseUnknownKeys(const std::vector<std::string>& known,
                                 const std::string& context = "") const;

  // "<source>: <path><key> <what>", the message of every error about one key.
  absl::Status Error(const std::string& key, const std::string& what) const;

 private:
  absl::StatusOr<const nlohmann::json*> Get(const std::string& key);

  const nlohmann::json& object_;
  std::string source_;
  std::string path_prefix_;
};

}  // namespace slotserve::base
