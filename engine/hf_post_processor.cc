#include "engine/hf_post_processor.h"

#include <string>

namespace slotserve::engine::hf {
namespace {

absl::Status AddTemplate(const Json& value, std::string_view path, PostProcessor* out) {
  absl::StatusOr<std::string> type = TypeOf(value, path);
  if (!type.ok()) return type.status();
  if (*type == "Sequence") {
    return ForEachElement(value, path, "processors",
                          [&](const Json& step, std::string_view step_path) {
                            return AddTemplate(step, step_path, out);
                          });
  }
  if (*type == "ByteLevel") return absl::OkStatus();
  if (*type != "TemplateProcessing") return UnsupportedType(path, *type);

  absl::StatusOr<const Json*> single = ArrayField(value, path, "single");
  if (!single.ok()) return single.status();
  const std::string single_path = JsonPath(path, "single");
  const auto specials = value.find("special_tokens");
  bool seen_sequence = false;
  for (size_t i = 0; i < (*single)->size(); ++i) {
    const Json& item = (**single)[i];
    const std::string item_path = JsonPath(single_path, i);
    if (item.is_object() && item.contains("Sequence")) {
      if (seen_sequence) return JsonError(item_path, "is a second Sequence");
      seen_sequence = true;
      continue;
    }
    if (!item.is_object() || !item.contains("SpecialToken") || !item["SpecialToken"].is_object()) {
      return JsonError(item_path, "must be {\"SpecialToken\": ...} or {\"Sequence\": ...}");
    }
    absl::StatusOr<std::string> name =
        StringField(item["SpecialToken"], JsonPath(item_path, "SpecialToken"), "id");
    if (!name.ok()) return name.status();
    const std::string special_path = JsonPath(JsonPath(path, "special_tokens"), *name);
    if (specials == value.end() || !specials->is_object() || !specials->contains(*name)) {
      return JsonError(special_path, "is missing");
    }
    const Json& special = (*specials)[*name];
    const auto ids = special.find("ids");
    if (!special.is_object() || ids == special.end() || !ids->is_array()) {
      return JsonError(JsonPath(special_path, "ids"), "must be an array of ids");
    }
    for (const Json& id : *ids) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > (1 << 24)) {
        return JsonError(JsonPath(special_path, "ids"), "must be an array of ids");
      }
      (seen_sequence ? out->suffix_ids : out->prefix_ids)
          .push_back(static_cast<int32_t>(id.get<int64_t>()));
    }
  }
  if (!seen_sequence) return JsonError(single_path, "has no {\"Sequence\": ...}");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PostProcessor> PostProcessor::FromJson(const Json& value, std::string_view path) {
  PostProcessor processor;
  if (value.is_null()) return processor;
  absl::Status added = AddTemplate(value, path, &processor);
  if (!added.ok()) return added;
  return processor;
}

}  // namespace slotserve::engine::hf
