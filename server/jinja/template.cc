#include "server/jinja/template.h"

#include "absl/status/status.h"
#include "server/jinja/ast.h"
#include "server/jinja/evaluator.h"
#include "server/jinja/globals.h"
#include "server/jinja/lexer.h"
#include "server/jinja/parser.h"

namespace slotserve::server::jinja {
namespace {

absl::Status ToStatus(const TemplateError& error, const std::string& origin) {
  return absl::InvalidArgumentError(origin + " line " + std::to_string(error.line) + ": " +
                                    error.message);
}

}  // namespace

absl::StatusOr<Template> Template::Compile(std::string_view source, std::string origin) {
  try {
    auto body = std::make_shared<const Body>(ParseTemplate(Tokenize(source)));
    return Template(std::move(body), std::move(origin));
  } catch (const TemplateError& error) {
    return ToStatus(error, origin);
  } catch (const std::exception& error) {
    // std::out_of_range from a number literal past int64 or double.
    return absl::InvalidArgumentError(origin + ": " + error.what());
  }
}

absl::StatusOr<std::string> Template::Render(const nlohmann::ordered_json& variables) const {
  if (!variables.is_object()) {
    return absl::InvalidArgumentError(origin_ + ": the variables must be a JSON object");
  }
  auto namespaces = std::make_shared<NamespaceList>();
  // Empties the render's namespaces however it ends (see NamespaceList).
  struct EmptyNamespaces {
    NamespaceList& list;
    ~EmptyNamespaces() {
      for (const std::weak_ptr<DictValue>& made : list) {
        if (std::shared_ptr<DictValue> alive = made.lock()) alive->entries.clear();
      }
    }
  } empty_namespaces{*namespaces};
  try {
    auto globals = std::make_shared<Scope>();
    AddGlobals(*globals, namespaces);
    auto scope = std::make_shared<Scope>(globals);
    for (const auto& [name, value] : variables.items()) scope->Set(name, Value::FromJson(value));
    std::string out;
    RenderBody(*body_, scope, out);
    return out;
  } catch (const TemplateError& error) {
    return ToStatus(error, origin_);
  } catch (const std::exception& error) {
    // std::out_of_range from a method called without its argument, std::bad_variant_access
    // from an operand of the wrong type that a filter did not check: the template's error.
    return absl::InvalidArgumentError(origin_ + ": " + error.what());
  }
}

}  // namespace slotserve::server::jinja
