#include "server/jinja/parser.h"

#include <initializer_list>
#include <string_view>

#include "server/jinja/expression_parser.h"

namespace slotserve::server::jinja {
namespace {

std::shared_ptr<Node> MakeNode(Node::Kind kind, int line) {
  auto node = std::make_shared<Node>();
  node->kind = kind;
  node->line = line;
  return node;
}

class Parser : public ExpressionParser {
 public:
  using ExpressionParser::ExpressionParser;

  Body ParseAll() {
    std::string end;
    return ParseBody({}, end);
  }

 private:
  Body ParseBody(std::initializer_list<std::string_view> ends, std::string& end) {
    Body body;
    for (;;) {
      const Token& token = Current();
      if (token.kind == TokenKind::kEnd) {
        if (ends.size() == 0) return body;
        std::string names;
        for (const std::string_view name : ends)
          names += (names.empty() ? "'" : " or '") + std::string(name) + "'";
        Raise("unexpected end of template, expected " + names, token.line);
      }
      if (token.kind == TokenKind::kText) {
        auto node = MakeNode(Node::Kind::kText, token.line);
        node->text = token.text;
        body.push_back(node);
        Advance();
      } else if (token.kind == TokenKind::kVariableBegin) {
        Advance();
        auto node = MakeNode(Node::Kind::kOutput, token.line);
        node->expr = ParseTuple();
        if (Current().kind != TokenKind::kVariableEnd) Unexpected("end of print statement");
        Advance();
        body.push_back(node);
      } else if (token.kind == TokenKind::kBlockBegin) {
        Advance();
        if (Current().kind != TokenKind::kName) Unexpected("a statement name");
        const std::string name = Current().text;
        for (const std::string_view candidate : ends) {
          if (name == candidate) {
            Advance();
            end = name;
            return body;
          }
        }
        body.push_back(ParseStatement());
      } else {
        Unexpected("text or a tag");
      }
    }
  }

  NodePtr ParseStatement() {
    const int line = Current().line;
    const std::string name = ExpectName();
    if (name == "if") return ParseIf(line);
    if (name == "for") return ParseFor(line);
    if (name == "set") return ParseSet(line);
    if (name == "macro") return ParseMacro(line);
    if (name == "call") return ParseCallBlock(line);
    if (name == "filter") return ParseFilterBlock(line);
    if (name == "break" || name == "continue") {
      ExpectBlockEnd();
      return MakeNode(name == "break" ? Node::Kind::kBreak : Node::Kind::kContinue, line);
    }
    if (name == "generation") {
      // transformers' AssistantTracker tag: marks the assistant's text; renders its body.
      ExpectBlockEnd();
      auto node = MakeNode(Node::Kind::kIf, line);
      node->conditions.push_back(nullptr);
      std::string end;
      node->bodies.push_back(ParseBody({"endgeneration"}, end));
      ExpectBlockEnd();
      return node;
    }
    Raise("encountered unknown tag '" + name + "'", line);
  }

  NodePtr ParseIf(int line) {
    auto node = MakeNode(Node::Kind::kIf, line);
    for (;;) {
      node->conditions.push_back(ParseExpression());
      ExpectBlockEnd();
      std::string end;
      node->bodies.push_back(ParseBody({"elif", "else", "endif"}, end));
      if (end == "elif") continue;
      if (end == "else") {
        ExpectBlockEnd();
        node->bodies.push_back(ParseBody({"endif"}, end));
      }
      ExpectBlockEnd();
      return node;
    }
  }

  std::vector<std::string> ParseTargets() {
    std::vector<std::string> targets;
    const bool parenthesised = SkipOperator("(");
    do {
      targets.push_back(ExpectName());
    } while (SkipOperator(","));
    if (parenthesised) ExpectOperator(")");
    return targets;
  }

  NodePtr ParseFor(int line) {
    auto node = MakeNode(Node::Kind::kFor, line);
    node->targets = ParseTargets();
    if (!SkipName("in")) Unexpected("'in'");
    node->expr = ParseTuple(/*with_condition=*/false);
    if (SkipName("if")) node->condition = ParseExpression();
    if (SkipName("recursive")) Raise("recursive for loops are not supported", line);
    ExpectBlockEnd();
    std::string end;
    node->bodies.push_back(ParseBody({"else", "endfor"}, end));
    if (end == "else") {
      ExpectBlockEnd();
      node->bodies.push_back(ParseBody({"endfor"}, end));
    }
    ExpectBlockEnd();
    return node;
  }

  NodePtr ParseSet(int line) {
    const std::vector<std::string> targets = ParseTargets();
    if (targets.size() == 1 && SkipOperator(".")) {
      auto node = MakeNode(Node::Kind::kSet, line);
      node->targets = targets;
      node->text = ExpectName();
      ExpectOperator("=");
      node->expr = ParseTuple();
      ExpectBlockEnd();
      return node;
    }
    if (SkipOperator("=")) {
      auto node = MakeNode(Node::Kind::kSet, line);
      node->targets = targets;
      node->expr = ParseTuple();
      ExpectBlockEnd();
      return node;
    }
    if (targets.size() != 1) Unexpected("'='");
    auto node = MakeNode(Node::Kind::kSetBlock, line);
    node->targets = targets;
    if (IsOperator("|")) node->filter_expr = ParseFilters(MakeExpr(Expr::Kind::kLiteral, line));
    ExpectBlockEnd();
    std::string end;
    node->bodies.push_back(ParseBody({"endset"}, end));
    ExpectBlockEnd();
    return node;
  }

  std::vector<MacroParameter> ParseParameters() {
    std::vector<MacroParameter> parameters;
    ExpectOperator("(");
    while (!SkipOperator(")")) {
      if (!parameters.empty()) ExpectOperator(",");
      if (SkipOperator(")")) break;
      MacroParameter parameter{ExpectName(), nullptr};
      if (SkipOperator("=")) parameter.default_value = ParseExpression();
      parameters.push_back(std::move(parameter));
    }
    return parameters;
  }

  NodePtr ParseMacro(int line) {
    auto node = MakeNode(Node::Kind::kMacro, line);
    node->text = ExpectName();
    node->parameters = ParseParameters();
    ExpectBlockEnd();
    std::string end;
    node->bodies.push_back(ParseBody({"endmacro"}, end));
    if (Current().kind == TokenKind::kName) Advance();  // {% endmacro name %}
    ExpectBlockEnd();
    return node;
  }

  NodePtr ParseCallBlock(int line) {
    auto node = MakeNode(Node::Kind::kCallBlock, line);
    if (IsOperator("(")) node->parameters = ParseParameters();
    node->expr = ParseExpression();
    if (node->expr->kind != Expr::Kind::kCall) Raise("expected call", line);
    ExpectBlockEnd();
    std::string end;
    node->bodies.push_back(ParseBody({"endcall"}, end));
    ExpectBlockEnd();
    return node;
  }

  NodePtr ParseFilterBlock(int line) {
    auto node = MakeNode(Node::Kind::kFilterBlock, line);
    node->filter_expr = ParseFilterChain(MakeExpr(Expr::Kind::kLiteral, line), /*first=*/true);
    ExpectBlockEnd();
    std::string end;
    node->bodies.push_back(ParseBody({"endfilter"}, end));
    ExpectBlockEnd();
    return node;
  }

  // A comma-separated list is a tuple, as in {{ a, b }} or {% for x in a, b %}.
};

}  // namespace

Body ParseTemplate(const std::vector<Token>& tokens) { return Parser(tokens).ParseAll(); }

}  // namespace slotserve::server::jinja
