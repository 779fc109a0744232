#include "server/http/jinja_chat_template.h"

#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace slotserve::server::http {
namespace {

// NOT_FOUND when the file does not exist.
absl::StatusOr<std::string> ReadFile(const std::filesystem::path& file) {
  if (!std::filesystem::exists(file)) return absl::NotFoundError(file.string());
  std::ifstream in(file, std::ios::binary);
  if (!in.is_open()) return absl::NotFoundError(absl::StrCat(file.string(), ": cannot be read"));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::StatusOr<nlohmann::ordered_json> ReadJsonObject(const std::filesystem::path& file) {
  SLOTSERVE_ASSIGN_OR_RETURN(const std::string text, ReadFile(file));
  nlohmann::ordered_json json;
  try {
    json = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    return absl::InvalidArgumentError(absl::StrCat(file.string(), ": not JSON: ", error.what()));
  }
  if (!json.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(file.string(), ": must be a JSON object"));
  }
  return json;
}

absl::StatusOr<jinja::Template> Compile(const std::string& source, const std::string& origin) {
  absl::StatusOr<jinja::Template> compiled = jinja::Template::Compile(source, origin);
  if (!compiled.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the chat template does not parse: ", compiled.status().message()));
  }
  return compiled;
}

// A special token as tokenizer_config.json / special_tokens_map.json write it: a string, or an
// AddedToken object {"content": ..., ...}; null when absent.
absl::StatusOr<nlohmann::ordered_json> SpecialToken(const nlohmann::ordered_json& config,
                                                    const std::string& key,
                                                    const std::filesystem::path& file) {
  const auto found = config.find(key);
  if (found == config.end() || found->is_null()) return nlohmann::ordered_json();
  if (found->is_string()) return *found;
  if (found->is_object() && found->contains("content") && (*found)["content"].is_string()) {
    return (*found)["content"];
  }
  return absl::InvalidArgumentError(absl::StrCat(
      file.string(), ": ", key, " must be a string or an object with a string \"content\", got ",
      found->dump()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<JinjaChatTemplate>> JinjaChatTemplate::LoadFromModelDir(
    const std::filesystem::path& model_dir) {
  const std::filesystem::path template_file = model_dir / kTemplateFileName;
  const std::filesystem::path config_file = model_dir / kTokenizerConfigFileName;
  const std::filesystem::path special_file = model_dir / kSpecialTokensFileName;
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  if (std::filesystem::exists(config_file)) {
    SLOTSERVE_ASSIGN_OR_RETURN(config, ReadJsonObject(config_file));
  }
  auto loaded = std::unique_ptr<JinjaChatTemplate>(new JinjaChatTemplate());
  if (std::filesystem::exists(template_file)) {
    SLOTSERVE_ASSIGN_OR_RETURN(const std::string source, ReadFile(template_file));
    loaded->origin_ = template_file.string();
    SLOTSERVE_ASSIGN_OR_RETURN(jinja::Template compiled, Compile(source, loaded->origin_));
    loaded->default_ = std::make_unique<jinja::Template>(std::move(compiled));
  } else if (config.contains("chat_template") && !config["chat_template"].is_null()) {
    const nlohmann::ordered_json& chat_template = config["chat_template"];
    const std::string key = absl::StrCat(config_file.string(), ": chat_template");
    if (chat_template.is_string()) {
      loaded->origin_ = key;
      SLOTSERVE_ASSIGN_OR_RETURN(jinja::Template compiled,
                                 Compile(chat_template.get<std::string>(), key));
      loaded->default_ = std::make_unique<jinja::Template>(std::move(compiled));
    } else if (chat_template.is_array()) {
      for (size_t i = 0; i < chat_template.size(); ++i) {
        const nlohmann::ordered_json& entry = chat_template[i];
        const std::string entry_key = absl::StrCat(key, "[", i, "]");
        if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string() ||
            !entry.contains("template") || !entry["template"].is_string()) {
          return absl::InvalidArgumentError(absl::StrCat(
              entry_key, " must be an object with string \"name\" and \"template\", got ",
              entry.dump()));
        }
        const std::string name = entry["name"].get<std::string>();
        SLOTSERVE_ASSIGN_OR_RETURN(
            jinja::Template compiled,
            Compile(entry["template"].get<std::string>(), absl::StrCat(key, " \"", name, "\"")));
        if (name == "default") {
          loaded->origin_ = absl::StrCat(key, " \"default\"");
          loaded->default_ = std::make_unique<jinja::Template>(std::move(compiled));
        } else {
          loaded->named_.emplace(name, std::move(compiled));
        }
      }
      if (loaded->default_ == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(key, " lists no template named \"default\""));
      }
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(key, " must be a string or a list of {\"name\", \"template\"}, got ",
                       chat_template.dump()));
    }
  } else {
    return nullptr;
  }
  nlohmann::ordered_json special = nlohmann::ordered_json::object();
  if (std::filesystem::exists(special_file)) {
    SLOTSERVE_ASSIGN_OR_RETURN(special, ReadJsonObject(special_file));
  }
  for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token"}) {
    SLOTSERVE_ASSIGN_OR_RETURN(nlohmann::ordered_json token,
                               SpecialToken(config, key, config_file));
    if (token.is_null()) {
      SLOTSERVE_ASSIGN_OR_RETURN(token, SpecialToken(special, key, special_file));
    }
    if (!token.is_null()) loaded->special_tokens_[key] = token;
  }
  if (loaded->special_tokens_.contains("bos_token")) {
    loaded->bos_token_ = loaded->special_tokens_["bos_token"].get<std::string>();
  }
  if (loaded->special_tokens_.contains("eos_token")) {
    loaded->eos_token_ = loaded->special_tokens_["eos_token"].get<std::string>();
  }
  return loaded;
}

absl::StatusOr<std::string> JinjaChatTemplate::Render(const nlohmann::ordered_json& messages,
                                                      const nlohmann::ordered_json& tools,
                                                      bool add_generation_prompt,
                                                      const nlohmann::ordered_json& kwargs,
                                                      const std::string& template_name) const {
  const jinja::Template* chosen = default_.get();
  if (!template_name.empty() && template_name != "default") {
    const auto found = named_.find(template_name);
    if (found == named_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the model has no chat template named \"", template_name, "\""));
    }
    chosen = &found->second;
  }
  nlohmann::ordered_json variables = {{"messages", messages},
                                      {"tools", tools},
                                      {"documents", nullptr},
                                      {"add_generation_prompt", add_generation_prompt}};
  for (const auto& [key, value] : special_tokens_.items()) variables[key] = value;
  if (kwargs.is_object()) {
    for (const auto& [key, value] : kwargs.items()) {
      if (key == "messages" || key == "tools" || key == "add_generation_prompt") {
        return absl::InvalidArgumentError(absl::StrCat("chat_template_kwargs must not set \"", key,
                                                       "\" (it is a request field of its own)"));
      }
      variables[key] = value;
    }
  }
  absl::StatusOr<std::string> rendered = chosen->Render(variables);
  if (!rendered.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model's chat template failed: ", rendered.status().message()));
  }
  return rendered;
}

std::vector<std::string> JinjaChatTemplate::names() const {
  std::vector<std::string> out;
  for (const auto& [name, compiled] : named_) out.push_back(name);
  return out;
}

}  // namespace slotserve::server::http
