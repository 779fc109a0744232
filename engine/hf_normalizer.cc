#include "engine/hf_normalizer.h"

#include "engine/hf_unicode.h"

namespace slotserve::engine::hf {

std::string ReplaceAll(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size());
  size_t start = 0;
  for (size_t hit = text.find(from); hit != std::string_view::npos; hit = text.find(from, start)) {
    out.append(text.substr(start, hit - start));
    out.append(to);
    start = hit + from.size();
  }
  out.append(text.substr(start));
  return out;
}

absl::StatusOr<Replacement> ReadReplacement(const Json& value, std::string_view path) {
  absl::StatusOr<std::string> from = StringPattern(value, path, "pattern");
  if (!from.ok()) return from.status();
  if (from->empty()) return JsonError(JsonPath(path, "pattern.String"), "must not be empty");
  absl::StatusOr<std::string> to = StringField(value, path, "content");
  if (!to.ok()) return to.status();
  return Replacement{*from, *to};
}

absl::StatusOr<Normalizer> Normalizer::FromJson(const Json& value, std::string_view path) {
  Normalizer normalizer;
  if (value.is_null()) return normalizer;
  absl::Status added = AddSteps(value, path, &normalizer.steps_);
  if (!added.ok()) return added;
  return normalizer;
}

absl::Status Normalizer::AddSteps(const Json& value, std::string_view path,
                                  std::vector<Step>* out) {
  absl::StatusOr<std::string> type = TypeOf(value, path);
  if (!type.ok()) return type.status();
  if (*type == "Sequence") {
    return ForEachElement(value, path, "normalizers",
                          [&](const Json& step, std::string_view step_path) {
                            return AddSteps(step, step_path, out);
                          });
  }
  if (*type == "Prepend") {
    absl::StatusOr<std::string> prefix = StringField(value, path, "prepend");
    if (!prefix.ok()) return prefix.status();
    out->push_back({Kind::kPrepend, "", *prefix});
    return absl::OkStatus();
  }
  if (*type == "Replace") {
    absl::StatusOr<Replacement> replacement = ReadReplacement(value, path);
    if (!replacement.ok()) return replacement.status();
    out->push_back({Kind::kReplace, replacement->from, replacement->to});
    return absl::OkStatus();
  }
  if (*type == "NFC" || *type == "NFKC") {
    out->push_back({*type == "NFC" ? Kind::kNfc : Kind::kNfkc, "", ""});
    return absl::OkStatus();
  }
  return UnsupportedType(path, *type);
}

std::string Normalizer::Normalize(std::string_view text) const {
  std::string current(text);
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Kind::kPrepend:
        // As `tokenizers`: nothing is prepended to empty text.
        if (!current.empty()) current = Cat(step.to, current);
        break;
      case Kind::kReplace:
        current = ReplaceAll(current, step.from, step.to);
        break;
      case Kind::kNfc:
        current = hf::Normalize(current, NormalForm::kNfc);
        break;
      case Kind::kNfkc:
        current = hf::Normalize(current, NormalForm::kNfkc);
        break;
    }
  }
  return current;
}

}  // namespace slotserve::engine::hf
