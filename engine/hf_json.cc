#include "engine/hf_json.h"

namespace slotserve::engine::hf {

std::string JsonPath(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : Cat(path, ".", key);
}

std::string JsonPath(std::string_view path, size_t index) { return Cat(path, "[", index, "]"); }

absl::Status JsonError(std::string_view path, std::string_view what) {
  return absl::InvalidArgumentError(Cat(path, " ", what));
}

absl::Status UnsupportedType(std::string_view path, std::string_view type) {
  return JsonError(JsonPath(path, "type"), Cat("\"", type, "\" is not supported"));
}

bool IsAbsent(const Json& object, std::string_view key) {
  const auto it = object.find(key);
  return it == object.end() || it->is_null();
}

absl::StatusOr<std::string> StringField(const Json& object, std::string_view path,
                                        std::string_view key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) {
    return JsonError(JsonPath(path, key), "must be a string");
  }
  return it->get<std::string>();
}

absl::StatusOr<bool> BoolField(const Json& object, std::string_view path, std::string_view key,
                               bool if_absent) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return if_absent;
  if (!it->is_boolean()) return JsonError(JsonPath(path, key), "must be true or false");
  return it->get<bool>();
}

absl::StatusOr<const Json*> ArrayField(const Json& object, std::string_view path,
                                       std::string_view key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_array()) {
    return JsonError(JsonPath(path, key), "must be an array");
  }
  return &*it;
}

absl::Status ForEachElement(
    const Json& object, std::string_view path, std::string_view key,
    absl::FunctionRef<absl::Status(const Json& element, std::string_view element_path)> visit) {
  absl::StatusOr<const Json*> array = ArrayField(object, path, key);
  if (!array.ok()) return array.status();
  const std::string array_path = JsonPath(path, key);
  for (size_t i = 0; i < (*array)->size(); ++i) {
    absl::Status visited = visit((**array)[i], JsonPath(array_path, i));
    if (!visited.ok()) return visited;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> TypeOf(const Json& object, std::string_view path) {
  if (!object.is_object()) return JsonError(path, "must be an object");
  return StringField(object, path, "type");
}

absl::StatusOr<std::string> StringPattern(const Json& object, std::string_view path,
                                          std::string_view key) {
  const std::string pattern_path = JsonPath(path, key);
  const auto it = object.find(key);
  if (it == object.end() || !it->is_object()) {
    return JsonError(pattern_path, "must be an object {\"String\": ...}");
  }
  if (it->contains("Regex")) {
    return JsonError(JsonPath(pattern_path, "Regex"), "is not supported here (only \"String\")");
  }
  return StringField(*it, pattern_path, "String");
}

}  // namespace slotserve::engine::hf
