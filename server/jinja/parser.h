// Parses a token stream (lexer.h) into the statements of a template (ast.h), with jinja2's
// grammar and operator precedence. Raises TemplateError naming the line and what was expected.
#pragma once

#include <vector>

#include "server/jinja/ast.h"
#include "server/jinja/lexer.h"

namespace slotserve::server::jinja {

Body ParseTemplate(const std::vector<Token>& tokens);

}  // namespace slotserve::server::jinja
