#include "server/jinja/expression_parser.h"

#include <algorithm>

#include "server/jinja/builtins.h"

namespace slotserve::server::jinja {

ExprPtr ExpressionParser::ParseTuple(bool with_condition) {
  const int line = Current().line;
  ExprPtr first = with_condition ? ParseExpression() : ParseOr();
  if (!IsOperator(",")) return first;
  auto tuple = MakeExpr(Expr::Kind::kTuple, line);
  tuple->children.push_back(first);
  while (SkipOperator(",")) {
    if (AtTupleEnd()) break;
    tuple->children.push_back(with_condition ? ParseExpression() : ParseOr());
  }
  return tuple;
}

bool ExpressionParser::AtTupleEnd() const {
  const TokenKind kind = Current().kind;
  return kind == TokenKind::kVariableEnd || kind == TokenKind::kBlockEnd || IsOperator(")") ||
         IsName("if");
}

ExprPtr ExpressionParser::ParseExpression() {
  const int line = Current().line;
  ExprPtr value = ParseOr();
  while (SkipName("if")) {
    auto conditional = MakeExpr(Expr::Kind::kConditional, line);
    conditional->children.push_back(ParseOr());
    conditional->children.push_back(value);
    conditional->children.push_back(SkipName("else") ? ParseExpression() : nullptr);
    value = conditional;
  }
  return value;
}

ExprPtr ExpressionParser::Binary(std::string op, ExprPtr left, ExprPtr right, int line) {
  auto expr = MakeExpr(Expr::Kind::kBinary, line);
  expr->name = std::move(op);
  expr->children = {std::move(left), std::move(right)};
  return expr;
}

ExprPtr ExpressionParser::ParseOr() {
  return ParseLeftAssociative({"or"}, &ExpressionParser::ParseAnd);
}

ExprPtr ExpressionParser::ParseAnd() {
  return ParseLeftAssociative({"and"}, &ExpressionParser::ParseNot);
}

ExprPtr ExpressionParser::ParseNot() {
  if (IsName("not")) {
    const int line = Current().line;
    Advance();
    auto expr = MakeExpr(Expr::Kind::kUnary, line);
    expr->name = "not";
    expr->children.push_back(ParseNot());
    return expr;
  }
  return ParseCompare();
}

ExprPtr ExpressionParser::ParseCompare() {
  ExprPtr left = ParseMath1();
  for (;;) {
    const int line = Current().line;
    std::string op;
    if (Current().kind == TokenKind::kOperator &&
        (Current().text == "==" || Current().text == "!=" || Current().text == "<" ||
         Current().text == ">" || Current().text == "<=" || Current().text == ">=")) {
      op = Current().text;
      Advance();
    } else if (IsName("in")) {
      op = "in";
      Advance();
    } else if (IsName("not") && Peek().kind == TokenKind::kName && Peek().text == "in") {
      op = "not in";
      Advance();
      Advance();
    } else {
      return left;
    }
    left = Binary(op, left, ParseMath1(), line);
  }
}

ExprPtr ExpressionParser::ParseMath1() {
  return ParseLeftAssociative({"+", "-"}, &ExpressionParser::ParseConcat);
}

ExprPtr ExpressionParser::ParseConcat() {
  return ParseLeftAssociative({"~"}, &ExpressionParser::ParseMath2);
}

ExprPtr ExpressionParser::ParseMath2() {
  return ParseLeftAssociative({"*", "/", "//", "%"}, &ExpressionParser::ParsePow);
}

ExprPtr ExpressionParser::ParsePow() {
  return ParseLeftAssociative({"**"}, &ExpressionParser::ParseUnaryWithFilters);
}

ExprPtr ExpressionParser::ParseUnaryWithFilters() { return ParseUnary(true); }

// One precedence level of binary operators, left to right: `next` parses the operands. An
// operator is a keyword ("and") or a symbol ("+").
ExprPtr ExpressionParser::ParseLeftAssociative(std::initializer_list<std::string_view> operators,
                                               ExprPtr (ExpressionParser::*next)()) {
  ExprPtr left = (this->*next)();
  for (;;) {
    const Token& token = Current();
    const bool matches =
        (token.kind == TokenKind::kOperator || token.kind == TokenKind::kName) &&
        std::find(operators.begin(), operators.end(), token.text) != operators.end();
    if (!matches) return left;
    const std::string op = token.text;
    const int line = token.line;
    Advance();
    left = Binary(op, left, (this->*next)(), line);
  }
}

ExprPtr ExpressionParser::ParseUnary(bool with_filter) {
  const int line = Current().line;
  ExprPtr node;
  if (IsOperator("-") || IsOperator("+")) {
    auto unary = MakeExpr(Expr::Kind::kUnary, line);
    unary->name = Current().text;
    Advance();
    unary->children.push_back(ParseUnary(false));
    node = unary;
  } else {
    node = ParsePrimary();
  }
  node = ParsePostfix(node);
  if (with_filter) node = ParseFilters(node);
  return node;
}

ExprPtr ExpressionParser::ParsePrimary() {
  const Token& token = Current();
  const int line = token.line;
  auto literal = MakeExpr(Expr::Kind::kLiteral, line);
  switch (token.kind) {
    case TokenKind::kName: {
      const std::string& name = token.text;
      Advance();
      if (name == "true" || name == "True") {
        literal->literal = Value(true);
      } else if (name == "false" || name == "False") {
        literal->literal = Value(false);
      } else if (name == "none" || name == "None") {
        literal->literal = Value(nullptr);
      } else {
        auto expr = MakeExpr(Expr::Kind::kName, line);
        expr->name = name;
        return expr;
      }
      return literal;
    }
    case TokenKind::kString: {
      std::string text;
      while (Current().kind == TokenKind::kString) {
        text += Current().text;
        Advance();
      }
      literal->literal = Value(std::move(text));
      return literal;
    }
    case TokenKind::kInteger:
      try {
        literal->literal = Value(static_cast<int64_t>(std::stoll(token.text)));
      } catch (const std::exception&) {
        Raise("integer literal " + token.text + " is too large", line);
      }
      Advance();
      return literal;
    case TokenKind::kFloat:
      literal->literal = Value(std::stod(token.text));
      Advance();
      return literal;
    default:
      break;
  }
  if (SkipOperator("(")) {
    if (SkipOperator(")")) {
      auto tuple = MakeExpr(Expr::Kind::kTuple, line);
      return tuple;
    }
    ExprPtr inner = ParseTuple();
    if (inner->kind != Expr::Kind::kTuple && IsOperator(",")) Unexpected("')'");
    ExpectOperator(")");
    return inner;
  }
  if (SkipOperator("[")) {
    auto list = MakeExpr(Expr::Kind::kList, line);
    while (!SkipOperator("]")) {
      if (!list->children.empty()) ExpectOperator(",");
      if (SkipOperator("]")) break;
      list->children.push_back(ParseExpression());
    }
    return list;
  }
  if (SkipOperator("{")) {
    auto dict = MakeExpr(Expr::Kind::kDict, line);
    while (!SkipOperator("}")) {
      if (!dict->children.empty()) ExpectOperator(",");
      if (SkipOperator("}")) break;
      dict->children.push_back(ParseExpression());
      ExpectOperator(":");
      dict->children.push_back(ParseExpression());
    }
    return dict;
  }
  Unexpected("an expression");
}

ExprPtr ExpressionParser::ParsePostfix(ExprPtr node) {
  for (;;) {
    const int line = Current().line;
    if (SkipOperator(".")) {
      if (Current().kind == TokenKind::kInteger) {
        auto item = MakeExpr(Expr::Kind::kItem, line);
        auto index = MakeExpr(Expr::Kind::kLiteral, line);
        try {
          index->literal = Value(static_cast<int64_t>(std::stoll(Current().text)));
        } catch (const std::exception&) {
          Raise("integer literal " + Current().text + " is too large", line);
        }
        Advance();
        item->children = {node, index};
        node = item;
        continue;
      }
      auto attribute = MakeExpr(Expr::Kind::kAttribute, line);
      attribute->name = ExpectName();
      attribute->children.push_back(node);
      node = attribute;
    } else if (SkipOperator("[")) {
      node = ParseSubscript(node, line);
    } else if (IsOperator("(")) {
      node = ParseCall(node);
    } else {
      return node;
    }
  }
}

ExprPtr ExpressionParser::ParseSubscript(ExprPtr node, int line) {
  ExprPtr parts[3];
  int part = 0;
  bool is_slice = false;
  while (!IsOperator("]")) {
    if (SkipOperator(":")) {
      is_slice = true;
      if (++part > 2) Unexpected("']'");
      continue;
    }
    if (parts[part] != nullptr) Unexpected("':' or ']'");
    parts[part] = ParseExpression();
  }
  Advance();
  if (!is_slice) {
    if (parts[0] == nullptr) Unexpected("an index");
    auto item = MakeExpr(Expr::Kind::kItem, line);
    item->children = {node, parts[0]};
    return item;
  }
  auto slice = MakeExpr(Expr::Kind::kSlice, line);
  slice->children = {node, parts[0], parts[1], parts[2]};
  return slice;
}

void ExpressionParser::ParseArguments(Expr& call) {
  ExpectOperator("(");
  bool first = true;
  while (!SkipOperator(")")) {
    if (!first) ExpectOperator(",");
    first = false;
    if (SkipOperator(")")) break;
    if (Current().kind == TokenKind::kName && Peek().kind == TokenKind::kOperator &&
        Peek().text == "=") {
      std::string name = Current().text;
      Advance();
      Advance();
      call.keywords.emplace_back(std::move(name), ParseExpression());
    } else {
      if (!call.keywords.empty())
        Raise("positional argument after a keyword argument", Current().line);
      call.children.push_back(ParseExpression());
    }
  }
}

ExprPtr ExpressionParser::ParseCall(ExprPtr callee) {
  auto call = MakeExpr(Expr::Kind::kCall, Current().line);
  call->children.push_back(callee);
  ParseArguments(*call);
  return call;
}

// `| filter(args)` and `is [not] test args`, in any order, left to right.
ExprPtr ExpressionParser::ParseFilters(ExprPtr node) {
  for (;;) {
    if (IsOperator("|")) {
      node = ParseFilterChain(node, /*first=*/false);
    } else if (IsName("is")) {
      node = ParseTest(node);
    } else if (IsOperator("(")) {
      node = ParseCall(node);
    } else {
      return node;
    }
  }
}

// One filter after "|" (or, for {% filter %}, the first without it).
ExprPtr ExpressionParser::ParseFilterChain(ExprPtr node, bool first) {
  if (!first) ExpectOperator("|");
  auto filter = MakeExpr(Expr::Kind::kFilter, Current().line);
  filter->name = ExpectName();
  while (SkipOperator(".")) filter->name += "." + ExpectName();
  if (!IsFilter(filter->name)) Raise("no filter named '" + filter->name + "'", filter->line);
  filter->children.push_back(node);
  if (IsOperator("(")) ParseArguments(*filter);
  if (first && IsOperator("|")) return ParseFilters(filter);
  return filter;
}

ExprPtr ExpressionParser::ParseTest(ExprPtr node) {
  auto test = MakeExpr(Expr::Kind::kTest, Current().line);
  Advance();  // "is"
  test->negated = SkipName("not");
  test->name = ExpectName();
  while (SkipOperator(".")) test->name += "." + ExpectName();
  if (!IsTest(test->name)) Raise("no test named '" + test->name + "'", test->line);
  test->children.push_back(node);
  if (IsOperator("(")) {
    ParseArguments(*test);
  } else {
    const TokenKind kind = Current().kind;
    const bool starts_argument =
        kind == TokenKind::kString || kind == TokenKind::kInteger || kind == TokenKind::kFloat ||
        IsOperator("[") || IsOperator("{") ||
        (kind == TokenKind::kName && !IsName("else") && !IsName("or") && !IsName("and"));
    if (starts_argument) {
      if (IsName("is")) Raise("You cannot chain multiple tests with is", Current().line);
      test->children.push_back(ParsePostfix(ParsePrimary()));
    }
  }
  return test;
}

}  // namespace slotserve::server::jinja
