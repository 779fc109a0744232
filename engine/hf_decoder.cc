#include "engine/hf_decoder.h"

#include "engine/byte_piece.h"
#include "engine/hf_byte_level.h"
#include "engine/hf_normalizer.h"

namespace slotserve::engine::hf {

absl::StatusOr<Decoder> Decoder::FromJson(const Json& value, std::string_view path) {
  Decoder decoder;
  if (value.is_null()) return decoder;
  absl::Status added = decoder.AddSteps(value, path);
  if (!added.ok()) return added;
  return decoder;
}

absl::Status Decoder::AddSteps(const Json& value, std::string_view path) {
  absl::StatusOr<std::string> type = TypeOf(value, path);
  if (!type.ok()) return type.status();
  if (*type == "Sequence") {
    return ForEachElement(
        value, path, "decoders",
        [&](const Json& step, std::string_view step_path) { return AddSteps(step, step_path); });
  }
  auto refuse_after_fuse = [&]() {
    return JsonError(
        JsonPath(path, "type"),
        Cat("\"", *type, "\" after a Fuse is not supported (only Strip from the start)"));
  };
  if (*type == "Fuse") {
    fused_ = true;
    return absl::OkStatus();
  }
  if (*type == "Replace") {
    if (fused_) return refuse_after_fuse();
    absl::StatusOr<Replacement> replacement = ReadReplacement(value, path);
    if (!replacement.ok()) return replacement.status();
    steps_.push_back({Kind::kReplace, replacement->from, replacement->to});
    return absl::OkStatus();
  }
  if (*type == "ByteFallback" || *type == "ByteLevel") {
    if (fused_) return refuse_after_fuse();
    steps_.push_back({*type == "ByteFallback" ? Kind::kByteFallback : Kind::kByteLevel, "", ""});
    return absl::OkStatus();
  }
  if (*type == "Metaspace") {
    if (fused_) return refuse_after_fuse();
    absl::StatusOr<std::string> replacement = StringField(value, path, "replacement");
    if (!replacement.ok()) return replacement.status();
    if (replacement->empty()) return JsonError(JsonPath(path, "replacement"), "must not be empty");
    bool prepends = true;
    if (!IsAbsent(value, "prepend_scheme")) {
      absl::StatusOr<std::string> scheme = StringField(value, path, "prepend_scheme");
      if (!scheme.ok()) return scheme.status();
      prepends = *scheme != "never";
    } else {
      absl::StatusOr<bool> prefix = BoolField(value, path, "add_prefix_space", true);
      if (!prefix.ok()) return prefix.status();
      prepends = *prefix;
    }
    steps_.push_back({Kind::kReplace, *replacement, " "});
    // The first token's leading space is the one the pre-tokenizer prepended.
    if (prepends) start_content_ = " ", start_count_ = 1;
    return absl::OkStatus();
  }
  if (*type == "Strip") {
    absl::StatusOr<std::string> content = StringField(value, path, "content");
    if (!content.ok()) return content.status();
    if (content->empty()) return JsonError(JsonPath(path, "content"), "must not be empty");
    int counts[2] = {0, 0};
    const char* keys[2] = {"start", "stop"};
    for (int k = 0; k < 2; ++k) {
      const auto it = value.find(keys[k]);
      if (it == value.end() || !it->is_number_integer() || it->get<int64_t>() < 0 ||
          it->get<int64_t>() > 64) {
        return JsonError(JsonPath(path, keys[k]), "must be a count in [0, 64]");
      }
      counts[k] = static_cast<int>(it->get<int64_t>());
    }
    if (!fused_) {
      steps_.push_back({Kind::kStrip, *content, "", counts[0], counts[1]});
      return absl::OkStatus();
    }
    if (counts[1] != 0) {
      return JsonError(JsonPath(path, "stop"),
                       "must be 0 after a Fuse (the end of a streamed sequence is not known)");
    }
    if (counts[0] > 1) {
      // One strip is streamed exactly (Tokenizer::EndsSequenceStart); more are not needed by
      // any known file.
      return JsonError(JsonPath(path, "start"), "must be 0 or 1 after a Fuse");
    }
    if (start_count_ > 0 && start_content_ != *content) {
      return JsonError(JsonPath(path, "content"), "differs from an earlier start strip");
    }
    start_content_ = *content;
    start_count_ = std::max(start_count_, counts[0]);
    return absl::OkStatus();
  }
  return UnsupportedType(path, *type);
}

std::string Decoder::PieceBytes(std::string_view piece) const {
  std::string current(piece);
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Kind::kReplace:
        current = ReplaceAll(current, step.from, step.to);
        break;
      case Kind::kByteFallback:
        if (const int value = ParseBytePiece(current); value >= 0) {
          current = std::string(1, static_cast<char>(value));
        }
        break;
      case Kind::kByteLevel:
        current = ByteLevelCharsToBytes(current);
        break;
      case Kind::kStrip: {
        std::string_view view = current;
        for (int k = 0; k < step.start && view.starts_with(step.from); ++k) {
          view.remove_prefix(step.from.size());
        }
        for (int k = 0; k < step.stop && view.ends_with(step.from); ++k) {
          view.remove_suffix(step.from.size());
        }
        current = std::string(view);
        break;
      }
    }
  }
  return current;
}

size_t Decoder::StartStrip(std::string_view text) const {
  size_t dropped = 0;
  for (int k = 0; k < start_count_ && !start_content_.empty() &&
                  text.substr(dropped).starts_with(start_content_);
       ++k) {
    dropped += start_content_.size();
  }
  return dropped;
}

}  // namespace slotserve::engine::hf
