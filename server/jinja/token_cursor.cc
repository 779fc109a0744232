#include "server/jinja/token_cursor.h"

namespace slotserve::server::jinja {

std::shared_ptr<Expr> MakeExpr(Expr::Kind kind, int line) {
  auto expr = std::make_shared<Expr>();
  expr->kind = kind;
  expr->line = line;
  return expr;
}

std::string DescribeToken(const Token& token) {
  switch (token.kind) {
    case TokenKind::kEnd:
      return "end of template";
    case TokenKind::kBlockEnd:
      return "end of statement block";
    case TokenKind::kVariableEnd:
      return "end of print statement";
    case TokenKind::kString:
      return "string";
    case TokenKind::kInteger:
      return "integer";
    case TokenKind::kFloat:
      return "float";
    default:
      return "'" + token.text + "'";
  }
}

}  // namespace slotserve::server::jinja
