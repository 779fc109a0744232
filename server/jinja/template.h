// A Jinja template compiled once and rendered many times, with jinja2's semantics in the
// environment Hugging Face transformers renders chat templates in (apply_chat_template):
// trim_blocks and lstrip_blocks, jinja2's default Undefined, loop controls, the globals
// raise_exception and strftime_now beside jinja2's range/dict/namespace/cycler/joiner, and
// transformers' tojson (Python's json.dumps). The supported language is listed in README.md
// (Chat templates). Rendering is thread-safe: a render owns all its state.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace slotserve::server::jinja {

struct Node;

class Template {
 public:
  // Parses `source`; a syntax error is INVALID_ARGUMENT "<origin> line N: <what>".
  static absl::StatusOr<Template> Compile(std::string_view source, std::string origin);

  // Renders with the members of `variables` (an object) as the template's variables. A failure
  // (raise_exception, an undefined value used, a bad operand) is INVALID_ARGUMENT
  // "<origin> line N: <what>"; raise_exception's message is quoted as the template gave it.
  absl::StatusOr<std::string> Render(const nlohmann::ordered_json& variables) const;

  const std::string& origin() const { return origin_; }

 private:
  Template(std::shared_ptr<const std::vector<std::shared_ptr<const Node>>> body, std::string origin)
      : body_(std::move(body)), origin_(std::move(origin)) {}

  std::shared_ptr<const std::vector<std::shared_ptr<const Node>>> body_;
  std::string origin_;
};

}  // namespace slotserve::server::jinja
