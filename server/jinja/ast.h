// The syntax tree of a parsed template: expressions and statements, each with the template line
// it came from for error messages.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "server/jinja/value.h"

namespace slotserve::server::jinja {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  enum class Kind {
    kLiteral,      // literal
    kName,         // name
    kList,         // children: items
    kTuple,        // children: items
    kDict,         // children: key, value, key, value, ...
    kAttribute,    // children[0].name
    kItem,         // children[0][children[1]]
    kSlice,        // children[0][children[1]:children[2]:children[3]] (null: omitted)
    kCall,         // children[0](children[1..], keywords)
    kFilter,       // children[0] | name(children[1..], keywords)
    kTest,         // children[0] is [not] name(children[1..])
    kUnary,        // name: "not", "-", "+"; children[0]
    kBinary,       // name: the operator ("and", "or", "in", "not in", "~", "+", ...)
    kConditional,  // children[1] if children[0] else children[2] (null: undefined)
  };
  Kind kind;
  int line = 0;
  Value literal;
  std::string name;
  std::vector<ExprPtr> children;
  std::vector<std::pair<std::string, ExprPtr>> keywords;
  bool negated = false;  // kTest: "is not"
};

struct Node;
using NodePtr = std::shared_ptr<const Node>;
using Body = std::vector<NodePtr>;

struct MacroParameter {
  std::string name;
  ExprPtr default_value;  // null: required
};

struct Node {
  enum class Kind {
    kText,         // text
    kOutput,       // {{ expr }}
    kIf,           // conditions[i] guards bodies[i]; bodies.back() is the else branch when
                   // bodies.size() > conditions.size()
    kFor,          // for targets in expr [if condition]: bodies[0] [else bodies[1]]
    kSet,          // set targets = expr, or set targets[0].attribute = expr
    kSetBlock,     // set targets[0] %} bodies[0] {% endset (filters applied: filter_expr)
    kMacro,        // macro name(parameters): bodies[0]
    kCallBlock,    // call(parameters) expr: bodies[0] as caller()
    kFilterBlock,  // filter ...: bodies[0], through filter_expr
    kBreak,
    kContinue,
  };
  Kind kind;
  int line = 0;
  std::string text;  // kText; kMacro: name; kSet: attribute ("" for plain names)
  ExprPtr expr;
  ExprPtr condition;    // kFor's filter
  ExprPtr filter_expr;  // kSetBlock / kFilterBlock: a kFilter chain over a kLiteral placeholder
  std::vector<ExprPtr> conditions;
  std::vector<Body> bodies;
  std::vector<std::string> targets;
  std::vector<MacroParameter> parameters;
};

}  // namespace slotserve::server::jinja
