// Typed reads of one JSON object's members (a request body, or an object inside it such as
// stream_options), each error naming the member by its path ("stream_options.include_usage")
// and quoting the value that was sent. Every member read (or Accept()ed) counts as known;
// CheckAllKnown() refuses the others, so a misspelt parameter is an error instead of being
// silently ignored.
//
// As OpenAI's API does, a member that is null counts as not given: the readers leave *out
// unchanged and return OK for it, as for an absent one.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include <nlohmann/json.hpp>
#include "absl/status/status.h"

namespace slotserve::server::http {

class JsonParams {
 public:
  // `object` must be a JSON object and outlive this reader; `path` prefixes member names in
  // errors ("" for the body, "stream_options" for a nested object).
  JsonParams(const nlohmann::json& object, std::string path = "");

  // The member, or nullptr when absent or null. Counts it as known.
  const nlohmann::json* Get(absl::string_view name);
  bool Has(absl::string_view name) { return Get(name) != nullptr; }
  // Counts a member as known without reading it (accepted and without effect).
  void Accept(absl::string_view name) { Get(name); }

  absl::Status Float(absl::string_view name, float* out);
  // Integral numbers only (16, or 16.0 as some clients write it), within [min, max].
  absl::Status Int(absl::string_view name, int64_t* out, int64_t min = INT64_MIN,
                   int64_t max = INT64_MAX);
  absl::Status Int32(absl::string_view name, int32_t* out);
  // Any integer in [-2^63, 2^64): negative ones wrap (a seed only has to be a fixed number).
  absl::Status Uint64(absl::string_view name, uint64_t* out);
  absl::Status Bool(absl::string_view name, bool* out);
  absl::Status String(absl::string_view name, std::string* out);
  // A string, or an array of strings.
  absl::Status Strings(absl::string_view name, std::vector<std::string>* out);
  absl::Status Int32s(absl::string_view name, std::vector<int32_t>* out);

  // INVALID_ARGUMENT (code "unknown_parameter") naming the first member nothing read.
  absl::Status CheckAllKnown() const;

  // "name" in the body, "path.name" inside a nested object.
  std::string PathOf(absl::string_view name) const;

  // INVALID_ARGUMENT (code "invalid_type") naming the member: "<path> must be <expected>,
  // got <value>".
  absl::Status TypeError(absl::string_view name, absl::string_view expected,
                         const nlohmann::json& value) const;

 private:
  const nlohmann::json& object_;
  std::string path_;
  std::set<std::string, std::less<>> known_;
};

// Whether `value` is a JSON integer, or a float with no fractional part within int64.
bool IsIntegral(const nlohmann::json& value);

// `value` as 32-bit integers; INVALID_ARGUMENT naming `path` (or its element) otherwise.
absl::Status ReadInt32Array(const nlohmann::json& value, absl::string_view path,
                            std::vector<int32_t>* out);

}  // namespace slotserve::server::http
