// Typed reads from a Hugging Face tokenizer.json: every error names the JSON path of the
// offending value (`pre_tokenizer.pretokenizers[1].type`), so a refused file says exactly
// what in it this server does not apply.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace slotserve::engine::hf {

using Json = nlohmann::json;

// Concatenates strings, string_views and integers (absl::StrCat takes no std::string_view
// with Debian's Abseil, whose absl::string_view is a class of its own).
template <typename Part>
void AppendPart(std::string* out, const Part& part) {
  if constexpr (std::is_integral_v<Part>) {
    out->append(std::to_string(part));
  } else if constexpr (std::is_convertible_v<const Part&, std::string_view>) {
    out->append(std::string_view(part));
  } else {
    out->append(part.data(), part.size());  // absl::string_view
  }
}
template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::string out;
  (AppendPart(&out, parts), ...);
  return out;
}

// "<path>.<key>" ("key" at the top level) and "<path>[<index>]".
std::string JsonPath(std::string_view path, std::string_view key);
std::string JsonPath(std::string_view path, size_t index);

// INVALID_ARGUMENT "<path> <what>".
absl::Status JsonError(std::string_view path, std::string_view what);
// INVALID_ARGUMENT `<path>.type "<type>" is not supported`.
absl::Status UnsupportedType(std::string_view path, std::string_view type);

// The object's member `key` as a string / bool / object; errors name "<path>.<key>".
absl::StatusOr<std::string> StringField(const Json& object, std::string_view path,
                                        std::string_view key);
absl::StatusOr<bool> BoolField(const Json& object, std::string_view path, std::string_view key,
                               bool if_absent);
absl::StatusOr<const Json*> ArrayField(const Json& object, std::string_view path,
                                       std::string_view key);
// The member "type" of an object at `path` (which must be an object).
absl::StatusOr<std::string> TypeOf(const Json& object, std::string_view path);
// A pattern {"String": "..."} as its string; a {"Regex": ...} is refused here (callers that
// take regexes read it themselves).
absl::StatusOr<std::string> StringPattern(const Json& object, std::string_view path,
                                          std::string_view key);
// Calls `visit` on each element of the array member `key` with the element's path
// ("<path>.<key>[i]"), stopping at the first error: the walk of a "Sequence".
absl::Status ForEachElement(
    const Json& object, std::string_view path, std::string_view key,
    absl::FunctionRef<absl::Status(const Json& element, std::string_view element_path)> visit);
// Whether the member is absent or null.
bool IsAbsent(const Json& object, std::string_view key);

}  // namespace slotserve::engine::hf
