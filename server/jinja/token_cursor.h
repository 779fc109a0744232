// The token stream a parser walks (parser.h): the current token, look-ahead, and the checks
// that raise TemplateError naming the line and what was expected.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "server/jinja/ast.h"
#include "server/jinja/lexer.h"

namespace slotserve::server::jinja {

std::shared_ptr<Expr> MakeExpr(Expr::Kind kind, int line);
// How an error message names a token: "'name'", "end of template", "string", ...
std::string DescribeToken(const Token& token);

class TokenCursor {
 public:
  explicit TokenCursor(const std::vector<Token>& tokens) : tokens_(tokens) {}

 protected:
  const Token& Current() const { return tokens_[pos_]; }
  const Token& Peek(size_t ahead = 1) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  void Advance() {
    if (pos_ + 1 < tokens_.size()) ++pos_;
  }
  bool IsOperator(std::string_view op) const {
    return Current().kind == TokenKind::kOperator && Current().text == op;
  }
  bool IsName(std::string_view name) const {
    return Current().kind == TokenKind::kName && Current().text == name;
  }
  bool SkipOperator(std::string_view op) {
    if (!IsOperator(op)) return false;
    Advance();
    return true;
  }
  bool SkipName(std::string_view name) {
    if (!IsName(name)) return false;
    Advance();
    return true;
  }
  [[noreturn]] void Unexpected(std::string_view expected) const {
    Raise("expected " + std::string(expected) + ", got " + DescribeToken(Current()),
          Current().line);
  }
  void ExpectOperator(std::string_view op) {
    if (!SkipOperator(op)) Unexpected("'" + std::string(op) + "'");
  }
  std::string ExpectName() {
    if (Current().kind != TokenKind::kName) Unexpected("a name");
    std::string name = Current().text;
    Advance();
    return name;
  }
  void ExpectBlockEnd() {
    if (Current().kind != TokenKind::kBlockEnd) Unexpected("end of statement block");
    Advance();
  }

  // Statements up to a {% tag %} whose name is in `ends` (consumed up to and including the

 private:
  const std::vector<Token>& tokens_;
  size_t pos_ = 0;
};

}  // namespace slotserve::server::jinja
