#include "server/http/openai_prompts.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "server/http/openai_errors.h"
#include "server/prompt_encoding.h"

namespace slotserve::server::http {
namespace {

// One prompt (`path` names it in errors): a non-empty string or array of token ids.
absl::StatusOr<SentPrompt> ReadOnePrompt(JsonParams& params, const nlohmann::json& prompt,
                                         const std::string& path, const ServedModel& model,
                                         bool echo) {
  SentPrompt sent;
  if (prompt.is_string()) {
    const std::string& text = prompt.get_ref<const std::string&>();
    if (text.empty()) return Invalid(path, absl::StrCat(path, " must not be empty"));
    SLOTSERVE_ASSIGN_OR_RETURN(
        sent.ids, EncodeText(text, path, model.tokenizer, model.seq2seq ? -1 : model.bos_id));
    if (echo) sent.echo_text = text;
    return sent;
  }
  if (prompt.is_array()) {
    if (prompt.empty()) return Invalid(path, absl::StrCat(path, " must not be empty"));
    SLOTSERVE_RETURN_IF_ERROR(ReadInt32Array(prompt, path, &sent.ids));
    if (echo && model.tokenizer != nullptr) sent.echo_text = model.tokenizer->Decode(sent.ids);
    return sent;
  }
  return params.TypeError(path, "a string or an array of token ids", prompt);
}

}  // namespace

absl::StatusOr<std::vector<SentPrompt>> ReadPrompts(JsonParams& params, const ServedModel& model,
                                                    bool echo) {
  const nlohmann::json* prompt = params.Get("prompt");
  // Beside a seq2seq source the prompt is an optional target prefix: absent, "" and [] alike.
  const bool no_prefix = prompt == nullptr || *prompt == "" || *prompt == nlohmann::json::array();
  if (model.seq2seq && no_prefix) return std::vector<SentPrompt>(1);
  if (prompt == nullptr) {
    return Invalid("prompt", "prompt is required: a string or an array of token ids");
  }
  std::vector<const nlohmann::json*> elements;
  if (prompt->is_array() && !prompt->empty() && !IsIntegral((*prompt)[0])) {
    for (const nlohmann::json& element : *prompt) elements.push_back(&element);
  } else {
    elements.push_back(prompt);
  }
  if (model.seq2seq && elements.size() > 1) {
    return ParamError("prompt", "unsupported_value",
                      absl::StrCat("prompt: a batch of prompts is not supported beside a source "
                                   "(one target prefix per request), got ",
                                   elements.size()));
  }
  std::vector<SentPrompt> prompts;
  for (size_t i = 0; i < elements.size(); ++i) {
    const std::string path = elements.size() == 1 ? "prompt" : absl::StrCat("prompt[", i, "]");
    SLOTSERVE_ASSIGN_OR_RETURN(SentPrompt sent,
                               ReadOnePrompt(params, *elements[i], path, model, echo));
    prompts.push_back(std::move(sent));
  }
  return prompts;
}

}  // namespace slotserve::server::http
