#include "engine/hf_pre_tokenizer.h"

#include <utility>

#include "engine/hf_byte_level.h"
#include "engine/hf_normalizer.h"

namespace slotserve::engine::hf {
namespace {

using Ranges = std::vector<std::pair<size_t, size_t>>;

Ranges FindAll(std::string_view text, std::string_view delimiter) {
  Ranges matches;
  for (size_t hit = text.find(delimiter); hit != std::string_view::npos;
       hit = text.find(delimiter, hit + delimiter.size())) {
    matches.emplace_back(hit, hit + delimiter.size());
  }
  return matches;
}

}  // namespace

absl::StatusOr<PreTokenizer> PreTokenizer::FromJson(const Json& value, std::string_view path) {
  PreTokenizer pre_tokenizer;
  if (value.is_null()) return pre_tokenizer;
  absl::Status added = AddSteps(value, path, &pre_tokenizer.steps_);
  if (!added.ok()) return added;
  return pre_tokenizer;
}

absl::Status PreTokenizer::AddSteps(const Json& value, std::string_view path,
                                    std::vector<Step>* out) {
  absl::StatusOr<std::string> type = TypeOf(value, path);
  if (!type.ok()) return type.status();
  if (*type == "Sequence") {
    return ForEachElement(value, path, "pretokenizers",
                          [&](const Json& step, std::string_view step_path) {
                            return AddSteps(step, step_path, out);
                          });
  }
  if (*type == "Split") {
    Step step;
    step.kind = Kind::kSplitString;
    absl::StatusOr<bool> invert = BoolField(value, path, "invert", false);
    if (!invert.ok()) return invert.status();
    if (*invert) return JsonError(JsonPath(path, "invert"), "true is not supported");
    absl::StatusOr<std::string> behavior = StringField(value, path, "behavior");
    if (!behavior.ok()) return behavior.status();
    static const std::pair<std::string_view, Behavior> kBehaviors[] = {
        {"Removed", Behavior::kRemoved},
        {"Isolated", Behavior::kIsolated},
        {"MergedWithPrevious", Behavior::kMergedWithPrevious},
        {"MergedWithNext", Behavior::kMergedWithNext},
        {"Contiguous", Behavior::kContiguous}};
    bool known = false;
    for (const auto& [name, kind] : kBehaviors) {
      if (*behavior == name) step.behavior = kind, known = true;
    }
    if (!known) {
      return JsonError(JsonPath(path, "behavior"), Cat("\"", *behavior, "\" is not supported"));
    }
    const auto pattern = value.find("pattern");
    if (pattern != value.end() && pattern->is_object() && pattern->contains("Regex")) {
      const std::string regex_path = JsonPath(JsonPath(path, "pattern"), "Regex");
      absl::StatusOr<std::string> regex = StringField(*pattern, JsonPath(path, "pattern"), "Regex");
      if (!regex.ok()) return regex.status();
      step.pattern = RecognizeSplitPattern(*regex);
      if (!step.pattern.has_value()) {
        return JsonError(regex_path, Cat("\"", *regex,
                                         "\" is not supported (only the GPT-2, "
                                         "Llama-3 and Qwen2 word patterns are)"));
      }
      if (step.behavior != Behavior::kIsolated) {
        return JsonError(JsonPath(path, "behavior"),
                         Cat("\"", *behavior,
                             "\" is not supported with a Regex pattern (only "
                             "\"Isolated\")"));
      }
      step.kind = Kind::kSplitPattern;
    } else {
      absl::StatusOr<std::string> delimiter = StringPattern(value, path, "pattern");
      if (!delimiter.ok()) return delimiter.status();
      if (delimiter->empty()) {
        return JsonError(JsonPath(path, "pattern.String"), "must not be empty");
      }
      step.text = *delimiter;
    }
    out->push_back(std::move(step));
    return absl::OkStatus();
  }
  if (*type == "ByteLevel") {
    Step step;
    step.kind = Kind::kByteLevel;
    absl::StatusOr<bool> prefix = BoolField(value, path, "add_prefix_space", true);
    absl::StatusOr<bool> use_regex = BoolField(value, path, "use_regex", true);
    if (!prefix.ok()) return prefix.status();
    if (!use_regex.ok()) return use_regex.status();
    step.add_prefix_space = *prefix;
    if (*use_regex) step.pattern = SplitPattern::kGpt2;
    out->push_back(std::move(step));
    return absl::OkStatus();
  }
  if (*type == "Metaspace") {
    Step step;
    step.kind = Kind::kMetaspace;
    absl::StatusOr<std::string> replacement = StringField(value, path, "replacement");
    if (!replacement.ok()) return replacement.status();
    if (replacement->empty()) return JsonError(JsonPath(path, "replacement"), "must not be empty");
    step.text = *replacement;
    absl::StatusOr<bool> split = BoolField(value, path, "split", true);
    if (!split.ok()) return split.status();
    step.split = *split;
    if (!IsAbsent(value, "prepend_scheme")) {
      absl::StatusOr<std::string> scheme = StringField(value, path, "prepend_scheme");
      if (!scheme.ok()) return scheme.status();
      if (*scheme == "always") {
        step.prepend = Prepend::kAlways;
      } else if (*scheme == "first") {
        step.prepend = Prepend::kFirst;
      } else if (*scheme == "never") {
        step.prepend = Prepend::kNever;
      } else {
        return JsonError(JsonPath(path, "prepend_scheme"),
                         Cat("\"", *scheme, "\" is not supported"));
      }
    } else {
      absl::StatusOr<bool> prefix = BoolField(value, path, "add_prefix_space", true);
      if (!prefix.ok()) return prefix.status();
      step.prepend = *prefix ? Prepend::kAlways : Prepend::kNever;
    }
    out->push_back(std::move(step));
    return absl::OkStatus();
  }
  return UnsupportedType(path, *type);
}

void PreTokenizer::Split(std::string_view text, bool at_input_start,
                         std::vector<std::string>* words) const {
  std::vector<std::string> current;
  if (!text.empty()) current.emplace_back(text);
  std::vector<std::string> next;
  for (const Step& step : steps_) {
    next.clear();
    for (size_t i = 0; i < current.size(); ++i) {
      Apply(step, current[i], at_input_start && i == 0, &next);
    }
    current.swap(next);
  }
  for (std::string& word : current) words->push_back(std::move(word));
}

void PreTokenizer::Apply(const Step& step, std::string_view piece, bool at_input_start,
                         std::vector<std::string>* out) {
  auto emit = [&](std::string_view part) {
    if (!part.empty()) out->emplace_back(part);
  };
  switch (step.kind) {
    case Kind::kSplitPattern:
      for (const auto& [begin, end] : FindSplitMatches(*step.pattern, piece)) {
        emit(piece.substr(begin, end - begin));
      }
      return;
    case Kind::kSplitString: {
      // As `tokenizers`' NormalizedString::split with each behaviour; Contiguous is
      // Isolated with each run of adjacent delimiters as one.
      Ranges matches = FindAll(piece, step.text);
      if (step.behavior == Behavior::kContiguous) {
        Ranges runs;
        for (const auto& match : matches) {
          if (!runs.empty() && runs.back().second == match.first) {
            runs.back().second = match.second;
          } else {
            runs.push_back(match);
          }
        }
        matches.swap(runs);
      }
      size_t start = 0;  // where the piece being built begins
      for (const auto& [begin, end] : matches) {
        switch (step.behavior) {
          case Behavior::kRemoved:
            emit(piece.substr(start, begin - start));
            start = end;
            break;
          case Behavior::kIsolated:
          case Behavior::kContiguous:
            emit(piece.substr(start, begin - start));
            emit(piece.substr(begin, end - begin));
            start = end;
            break;
          case Behavior::kMergedWithPrevious:
            emit(piece.substr(start, end - start));
            start = end;
            break;
          case Behavior::kMergedWithNext:
            emit(piece.substr(start, begin - start));
            start = begin;
            break;
        }
      }
      emit(piece.substr(start));
      return;
    }
    case Kind::kByteLevel: {
      std::string spaced;
      std::string_view text = piece;
      if (step.add_prefix_space && !piece.starts_with(' ')) {
        spaced = Cat(" ", piece);
        text = spaced;
      }
      auto emit_bytes = [&](std::string_view part) {
        if (part.empty()) return;
        std::string chars;
        AppendByteLevelChars(part, &chars);
        out->push_back(std::move(chars));
      };
      if (!step.pattern.has_value()) {
        emit_bytes(text);
        return;
      }
      for (const auto& [begin, end] : FindSplitMatches(*step.pattern, text)) {
        emit_bytes(text.substr(begin, end - begin));
      }
      return;
    }
    case Kind::kMetaspace: {
      std::string replaced = ReplaceAll(piece, " ", step.text);
      const bool prepend =
          step.prepend == Prepend::kAlways || (step.prepend == Prepend::kFirst && at_input_start);
      if (prepend && !replaced.starts_with(step.text)) replaced = step.text + replaced;
      if (!step.split) {
        emit(replaced);
        return;
      }
      // Split before each replacement character (MergedWithNext).
      std::string_view view = replaced;
      size_t start = 0;
      for (size_t hit = view.find(step.text, 1); hit != std::string_view::npos;
           hit = view.find(step.text, hit + step.text.size())) {
        emit(view.substr(start, hit - start));
        start = hit;
      }
      emit(view.substr(start));
      return;
    }
  }
}

}  // namespace slotserve::engine::hf
