// The expression half of the parser (parser.h): jinja2's grammar and operator precedence, from
// conditional expressions down to literals, with filters, tests, calls, attributes and slices.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "server/jinja/token_cursor.h"

namespace slotserve::server::jinja {

class ExpressionParser : public TokenCursor {
 public:
  using TokenCursor::TokenCursor;

 protected:
  // A comma-separated list is a tuple, as in {{ a, b }} or {% for x in a, b %}.
  ExprPtr ParseTuple(bool with_condition = true);
  ExprPtr ParseExpression();
  ExprPtr ParseOr();
  void ParseArguments(Expr& call);
  ExprPtr ParseFilters(ExprPtr node);
  ExprPtr ParseFilterChain(ExprPtr node, bool first);

 private:
  bool AtTupleEnd() const;
  ExprPtr Binary(std::string op, ExprPtr left, ExprPtr right, int line);
  ExprPtr ParseAnd();
  ExprPtr ParseNot();
  ExprPtr ParseCompare();
  ExprPtr ParseMath1();
  ExprPtr ParseConcat();
  ExprPtr ParseMath2();
  ExprPtr ParsePow();
  ExprPtr ParseUnaryWithFilters();
  ExprPtr ParseLeftAssociative(std::initializer_list<std::string_view> operators,
                               ExprPtr (ExpressionParser::*next)());
  ExprPtr ParseUnary(bool with_filter);
  ExprPtr ParsePrimary();
  ExprPtr ParsePostfix(ExprPtr node);
  ExprPtr ParseSubscript(ExprPtr node, int line);
  ExprPtr ParseCall(ExprPtr callee);
  ExprPtr ParseTest(ExprPtr node);
};

}  // namespace slotserve::server::jinja
