// The checkpoint's own chat template, as a Hugging Face model directory ships it:
// <model>/chat_template.jinja (what newer transformers saves), else tokenizer_config.json's
// "chat_template" (a string, or a list of {"name", "template"} of which "default" is used and
// the others can be asked for by name). Compiled once at start-up (server/jinja); rendered on
// the HTTP thread with the variables transformers' apply_chat_template gives it: messages,
// tools (null when none), documents (null), add_generation_prompt, the special tokens of
// tokenizer_config.json / special_tokens_map.json (bos_token, eos_token, unk_token, pad_token;
// a string or {"content": ...}), then the request's chat_template_kwargs.
//
// A directory with neither keeps the server's simple templates (chat_template.h).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "server/jinja/template.h"

namespace slotserve::server::http {

class JinjaChatTemplate {
 public:
  static constexpr std::string_view kTemplateFileName = "chat_template.jinja";
  static constexpr std::string_view kTokenizerConfigFileName = "tokenizer_config.json";
  static constexpr std::string_view kSpecialTokensFileName = "special_tokens_map.json";

  // The directory's Jinja template, or null when it has none. A template that does not parse,
  // or a tokenizer_config.json whose chat_template or special tokens have the wrong shape, is
  // INVALID_ARGUMENT naming the file, the key and the error.
  static absl::StatusOr<std::unique_ptr<JinjaChatTemplate>> LoadFromModelDir(
      const std::filesystem::path& model_dir);

  // Renders `messages` (as the request sent them) with the variables above. `template_name`
  // "" is the default template; another must be one of names(). `kwargs` (an object or null)
  // adds or overrides variables, except messages, tools and add_generation_prompt. Errors:
  // INVALID_ARGUMENT, the template's own error quoted ("chat template line 3: Conversation
  // roles must alternate user/assistant/user/assistant/...").
  absl::StatusOr<std::string> Render(const nlohmann::ordered_json& messages,
                                     const nlohmann::ordered_json& tools,
                                     bool add_generation_prompt,
                                     const nlohmann::ordered_json& kwargs,
                                     const std::string& template_name = "") const;

  // The names of the templates besides the default (tokenizer_config.json's list form).
  std::vector<std::string> names() const;
  bool HasTemplate(const std::string& name) const { return named_.count(name) > 0; }
  // The BOS and EOS tokens' text ("" when none), which a rendered prompt may contain.
  const std::string& bos_token() const { return bos_token_; }
  const std::string& eos_token() const { return eos_token_; }
  // The file (and key) the default template came from, for the start-up line.
  const std::string& origin() const { return origin_; }

 private:
  JinjaChatTemplate() = default;

  std::unique_ptr<jinja::Template> default_;
  std::map<std::string, jinja::Template> named_;
  nlohmann::ordered_json special_tokens_ = nlohmann::ordered_json::object();
  std::string bos_token_;
  std::string eos_token_;
  std::string origin_;
};

}  // namespace slotserve::server::http
