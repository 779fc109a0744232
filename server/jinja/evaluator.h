// Renders a parsed template (ast.h) with jinja2's semantics: scopes as jinja2 has them (a for
// loop's body and a macro's body assign in their own scope, so templates carry state out of a
// loop with namespace()), the loop variable, macros and call blocks, break and continue.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "server/jinja/ast.h"
#include "server/jinja/value.h"

namespace slotserve::server::jinja {

class Scope {
 public:
  explicit Scope(std::shared_ptr<Scope> parent = nullptr) : parent_(std::move(parent)) {}
  // The value of `name` here or in an enclosing scope; undefined ("'name' is undefined") if none.
  Value Lookup(const std::string& name) const;
  void Set(const std::string& name, Value value) { variables_[name] = std::move(value); }

 private:
  std::map<std::string, Value, std::less<>> variables_;
  std::shared_ptr<Scope> parent_;
};

// Appends the rendering of `body` with the variables of `globals` to `out`. Raises
// TemplateError.
void RenderBody(const Body& body, std::shared_ptr<Scope> globals, std::string& out);

}  // namespace slotserve::server::jinja
