// libFuzzer target: template text -> server/jinja's Template::Compile, and a render of what
// compiles with a small conversation. Any input must compile or fail with a message, and any
// compiled template render or fail with one; never a crash, leak or undefined behaviour.
// Templates that could run for as long as they like (range(), repetition with *, loops nested
// more than three deep over the conversation) are only compiled: a
// template is trusted checkpoint data, and such loops are its author's to bound, as in jinja2.
#include <cstddef>
#include <cstdint>
#include <string>

#include "nlohmann/json.hpp"
#include "server/jinja/template.h"

namespace {

size_t Occurrences(const std::string& text, const std::string& word) {
  size_t count = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++count;
  return count;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<slotserve::server::jinja::Template> compiled =
      slotserve::server::jinja::Template::Compile(text, "template");
  if (!compiled.ok()) {
    if (compiled.status().message().empty()) __builtin_trap();  // errors must say why
    return 0;
  }
  if (Occurrences(text, "range") > 0 || Occurrences(text, "*") > 0 ||
      Occurrences(text, "for") > 3) {
    return 0;
  }
  static const nlohmann::ordered_json kVariables = nlohmann::ordered_json::parse(R"({
    "messages": [{"role": "system", "content": "Be brief."},
                 {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
                 {"role": "assistant", "content": "", "tool_calls": [{"id": "c1",
                  "type": "function", "function": {"name": "f", "arguments": {"x": 1.5}}}]},
                 {"role": "tool", "tool_call_id": "c1", "content": "{\"y\": null}"}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>"})");
  absl::StatusOr<std::string> rendered = compiled->Render(kVariables);
  if (!rendered.ok() && rendered.status().message().empty()) __builtin_trap();
  return 0;
}
