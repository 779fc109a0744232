#include "server/http/chat_template.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/json_document.h"
#include "base/json_fields.h"
#include "base/status_macros.h"

namespace slotserve::server::http {
namespace {

constexpr std::string_view kFormat = "slotserve-chat-template";
constexpr int64_t kFormatVersion = 1;

// One pass over `format`, so that a message's content is inserted verbatim even when it holds
// "{role}" or "{content}" itself.
void AppendRendered(std::string_view format, const ChatMessage& message, std::string* out) {
  size_t at = 0;
  while (at < format.size()) {
    if (format.compare(at, 6, "{role}") == 0) {
      out->append(message.role);
      at += 6;
    } else if (format.compare(at, 9, "{content}") == 0) {
      out->append(message.content);
      at += 9;
    } else {
      out->push_back(format[at++]);
    }
  }
}

absl::Status CheckText(const std::string& source, const std::string& key,
                       const nlohmann::json& value) {
  if (!value.is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": ", key, " must be a string, got ", base::JsonForMessage(value)));
  }
  return absl::OkStatus();
}

}  // namespace

void ChatTemplate::AddStopsAsWrittenBy(const engine::Tokenizer& tokenizer) {
  const std::vector<std::string> stops = stop_;
  for (const std::string& stop : stops) {
    // Behind a letter, as the stop appears after a model's words: the round trip then keeps
    // (or normalises) its leading whitespace instead of dropping it as the sequence's start.
    const absl::StatusOr<std::vector<int32_t>> ids = tokenizer.Encode("a" + stop);
    if (!ids.ok()) continue;
    const std::string written = tokenizer.Decode(*ids);
    if (written.size() < 2 || written[0] != 'a') continue;
    std::string as_written = written.substr(1);
    if (std::find(stop_.begin(), stop_.end(), as_written) == stop_.end()) {
      stop_.push_back(std::move(as_written));
    }
  }
}

ChatTemplate ChatTemplate::Default() {
  ChatTemplate chat_template;
  for (const char* role : {"system", "user", "assistant"}) {
    chat_template.message_formats_.emplace(role, kDefaultMessage);
  }
  chat_template.generation_prompt_ = kDefaultGenerationPrompt;
  chat_template.stop_ = {std::string(kDefaultStop)};
  return chat_template;
}

absl::StatusOr<ChatTemplate> ChatTemplate::Parse(std::string_view text, const std::string& source) {
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json document, base::ParseJsonDocument(text, source));
  if (!document.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": must be a JSON object, got ", base::JsonForMessage(document)));
  }
  base::JsonFields fields(document, source, "");
  SLOTSERVE_RETURN_IF_ERROR(fields.RefuseUnknownKeys(
      {"format", "format_version", "messages", "generation_prompt", "stop"}));
  SLOTSERVE_ASSIGN_OR_RETURN(const std::string format, fields.String("format"));
  if (format != kFormat) {
    return fields.Error(
        "format", absl::StrCat("must be \"", std::string(kFormat), "\", got \"", format, "\""));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(const int64_t version,
                             fields.Integer("format_version", kFormatVersion, kFormatVersion));
  (void)version;

  ChatTemplate chat_template;
  chat_template.origin_ = source;
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json* messages, fields.Object("messages"));
  if (messages->empty()) return fields.Error("messages", "must name at least one role, got {}");
  for (const auto& [role, format_text] : messages->items()) {
    SLOTSERVE_RETURN_IF_ERROR(CheckText(source, absl::StrCat("messages.", role), format_text));
    chat_template.message_formats_.emplace(role, format_text.get<std::string>());
  }
  if (document.contains("generation_prompt")) {
    SLOTSERVE_ASSIGN_OR_RETURN(chat_template.generation_prompt_,
                               fields.String("generation_prompt"));
  }
  if (document.contains("stop")) {
    const nlohmann::json& stop = document["stop"];
    if (!stop.is_array()) {
      return fields.Error(
          "stop", absl::StrCat("must be an array of strings, got ", base::JsonForMessage(stop)));
    }
    for (size_t i = 0; i < stop.size(); ++i) {
      const std::string key = absl::StrCat("stop[", i, "]");
      SLOTSERVE_RETURN_IF_ERROR(CheckText(source, key, stop[i]));
      if (stop[i].get<std::string>().empty()) return fields.Error(key, "must not be empty");
      chat_template.stop_.push_back(stop[i].get<std::string>());
    }
  }
  return chat_template;
}

absl::StatusOr<ChatTemplate> ChatTemplate::LoadFromModelDir(
    const std::filesystem::path& model_dir) {
  const std::filesystem::path file = model_dir / kFileName;
  if (!std::filesystem::exists(file)) return Default();
  std::ifstream in(file, std::ios::binary);
  if (!in.is_open()) return absl::NotFoundError(absl::StrCat(file.string(), ": cannot be read"));
  std::ostringstream text;
  text << in.rdbuf();
  return Parse(text.str(), file.string());
}

bool ChatTemplate::AcceptsRole(std::string_view role) const {
  return message_formats_.find(role) != message_formats_.end();
}

std::vector<std::string> ChatTemplate::roles() const {
  std::vector<std::string> names;
  for (const auto& [role, format] : message_formats_) names.push_back(role);
  return names;
}

std::string ChatTemplate::Render(const std::vector<ChatMessage>& messages,
                                 bool add_generation_prompt) const {
  std::string prompt;
  for (const ChatMessage& message : messages) {
    const auto format = message_formats_.find(message.role);
    if (format != message_formats_.end()) AppendRendered(format->second, message, &prompt);
  }
  if (add_generation_prompt) prompt += generation_prompt_;
  return prompt;
}

}  // namespace slotserve::server::http
