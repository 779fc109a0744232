// Splits a template's source into tokens with jinja2's lexer rules in the environment Hugging
// Face renders chat templates with (trim_blocks and lstrip_blocks on, newlines normalised, one
// trailing newline dropped): text between tags (whitespace control already applied), the tag
// delimiters, and the names, literals and operators inside tags. Comments yield nothing; the
// text of a {% raw %} block is one text token.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace slotserve::server::jinja {

enum class TokenKind {
  kText,
  kVariableBegin,  // {{
  kVariableEnd,    // }}
  kBlockBegin,     // {%
  kBlockEnd,       // %}
  kName,
  kString,   // text: the value, escapes resolved
  kInteger,  // text: the digits, underscores removed
  kFloat,
  kOperator,
  kEnd,  // after the last token
};

struct Token {
  TokenKind kind;
  std::string text;
  int line;
};

// Raises TemplateError (value.h) for an unterminated tag, comment or string, or a character
// that starts no token.
std::vector<Token> Tokenize(std::string_view source);

}  // namespace slotserve::server::jinja
