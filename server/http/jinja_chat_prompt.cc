#include "server/http/jinja_chat_prompt.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "server/http/jinja_chat_template.h"
#include "server/http/openai_errors.h"
#include "server/prompt_encoding.h"

namespace slotserve::server::http {
namespace {

absl::Status MessagesError(const std::string& path, absl::string_view code,
                           const std::string& message) {
  return ParamError(path, code, message);
}

std::string Shown(const nlohmann::ordered_json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 200) text = text.substr(0, 200) + "...";
  return text;
}

// The shapes transformers' templates expect; anything else is refused naming its path.
absl::Status CheckMessages(const nlohmann::ordered_json* messages) {
  if (messages == nullptr || !messages->is_array() || messages->empty()) {
    return MessagesError("messages", messages == nullptr ? "invalid_value" : "invalid_type",
                         absl::StrCat("messages must be a non-empty array of {\"role\", "
                                      "\"content\"} objects, got ",
                                      messages == nullptr ? "none" : Shown(*messages)));
  }
  for (size_t i = 0; i < messages->size(); ++i) {
    const std::string path = absl::StrCat("messages[", i, "]");
    const nlohmann::ordered_json& message = (*messages)[i];
    if (!message.is_object()) {
      return MessagesError(path, "invalid_type",
                           absl::StrCat(path, " must be an object, got ", Shown(message)));
    }
    if (!message.contains("role") || !message["role"].is_string()) {
      return MessagesError(
          path + ".role", "invalid_type",
          absl::StrCat(path, ".role must be a string, got ",
                       message.contains("role") ? Shown(message["role"]) : "none"));
    }
    for (const auto& [key, value] : message.items()) {
      const std::string field = absl::StrCat(path, ".", key);
      if (key == "role") continue;
      if (key == "content") {
        const bool parts = value.is_array();
        if (!value.is_string() && !value.is_null() && !parts) {
          return MessagesError(field, "invalid_type",
                               absl::StrCat(field,
                                            " must be a string, a list of text parts or "
                                            "null, got ",
                                            Shown(value)));
        }
        for (size_t p = 0; parts && p < value.size(); ++p) {
          const nlohmann::ordered_json& part = value[p];
          if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
              !part["text"].is_string()) {
            return MessagesError(absl::StrCat(field, "[", p, "]"), "unsupported_value",
                                 absl::StrCat(field, "[", p,
                                              "] must be {\"type\": \"text\", "
                                              "\"text\": ...}, got ",
                                              Shown(part)));
          }
        }
      } else if (key == "name" || key == "tool_call_id" || key == "reasoning_content") {
        if (!value.is_string() && !value.is_null()) {
          return MessagesError(field, "invalid_type",
                               absl::StrCat(field, " must be a string, got ", Shown(value)));
        }
      } else if (key == "tool_calls") {
        if (!value.is_array() && !value.is_null()) {
          return MessagesError(field, "invalid_type",
                               absl::StrCat(field, " must be an array, got ", Shown(value)));
        }
      } else {
        return MessagesError(field, "unknown_parameter",
                             absl::StrCat(field,
                                          " is not a message field (role, content, name, "
                                          "tool_calls, tool_call_id, reasoning_content)"));
      }
    }
  }
  return absl::OkStatus();
}

// The rendered prompt's ids: the BOS and EOS tokens' text become their ids, the text between
// is encoded without a BOS.
absl::StatusOr<std::vector<int32_t>> EncodeRendered(const std::string& text,
                                                    const std::string& bos_text,
                                                    const std::string& eos_text,
                                                    const ServedModel& model) {
  std::vector<int32_t> ids;
  size_t start = 0;
  for (;;) {
    size_t next = std::string::npos;
    int32_t special = -1;
    size_t special_length = 0;
    for (const auto& [token, id] : {std::pair<const std::string&, int>{bos_text, model.bos_id},
                                    std::pair<const std::string&, int>{eos_text, model.eos_id}}) {
      if (token.empty() || id < 0) continue;
      const size_t at = text.find(token, start);
      if (at < next) {
        next = at;
        special = id;
        special_length = token.size();
      }
    }
    const std::string segment = text.substr(start, next == std::string::npos ? next : next - start);
    if (!segment.empty()) {
      SLOTSERVE_ASSIGN_OR_RETURN(std::vector<int32_t> encoded,
                                 EncodeText(segment, "messages", model.tokenizer, /*bos_id=*/-1));
      ids.insert(ids.end(), encoded.begin(), encoded.end());
    }
    if (next == std::string::npos) return ids;
    ids.push_back(special);
    start = next + special_length;
  }
}

}  // namespace

absl::StatusOr<std::vector<int32_t>> RenderJinjaChatPrompt(JsonParams& params,
                                                           const nlohmann::ordered_json& body,
                                                           const ServedModel& model) {
  const JinjaChatTemplate& chat_template = *model.jinja_chat_template;
  params.Accept("messages");
  const auto messages = body.find("messages");
  SLOTSERVE_RETURN_IF_ERROR(CheckMessages(messages == body.end() ? nullptr : &*messages));
  bool add_generation_prompt = true;
  SLOTSERVE_RETURN_IF_ERROR(params.Bool("add_generation_prompt", &add_generation_prompt));

  nlohmann::ordered_json tools;  // null: the template sees tools = none, as in transformers
  if (const auto found = body.find("tools"); found != body.end() && !found->is_null()) {
    if (!found->is_array()) {
      return ParamError(
          "tools", "invalid_type",
          absl::StrCat("tools must be an array of tool objects, got ", Shown(*found)));
    }
    if (!found->empty()) tools = *found;
  }
  params.Accept("tools");

  nlohmann::ordered_json kwargs;
  if (const auto found = body.find("chat_template_kwargs"); found != body.end()) {
    if (!found->is_object() && !found->is_null()) {
      return ParamError(
          "chat_template_kwargs", "invalid_type",
          absl::StrCat("chat_template_kwargs must be an object, got ", Shown(*found)));
    }
    kwargs = *found;
  }
  params.Accept("chat_template_kwargs");

  std::string template_name;
  SLOTSERVE_RETURN_IF_ERROR(params.String("chat_template", &template_name));
  if (!template_name.empty() && template_name != "default" &&
      !chat_template.HasTemplate(template_name)) {
    std::string offered = "\"default\"";
    for (const std::string& name : chat_template.names())
      absl::StrAppend(&offered, ", \"", name, "\"");
    return ParamError("chat_template", "invalid_value",
                      absl::StrCat("chat_template must name one of the model's chat templates (",
                                   offered, "), got \"", template_name,
                                   "\"; a template's text is not accepted per request"));
  }

  absl::StatusOr<std::string> rendered =
      chat_template.Render(*messages, tools, add_generation_prompt, kwargs, template_name);
  if (!rendered.ok()) {
    const bool kwargs_refused =
        absl::StrContains(rendered.status().message(), "chat_template_kwargs");
    return ParamError(kwargs_refused ? "chat_template_kwargs" : "messages", "invalid_value",
                      rendered.status().message());
  }
  return EncodeRendered(*rendered, chat_template.bos_token(), chat_template.eos_token(), model);
}

}  // namespace slotserve::server::http
