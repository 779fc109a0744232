#include "server/jinja/evaluator.h"

#include <cmath>
#include <utility>

#include "server/jinja/builtins.h"

namespace slotserve::server::jinja {

Value Scope::Lookup(const std::string& name) const {
  for (const Scope* scope = this; scope != nullptr; scope = scope->parent_.get()) {
    const auto found = scope->variables_.find(name);
    if (found != scope->variables_.end()) return found->second;
  }
  return Value::Undefined("'" + name + "' is undefined");
}

namespace {

enum class Flow { kNormal, kBreak, kContinue };

// Python's arithmetic on ints and floats; raises for other operands.
Value Arithmetic(const std::string& op, const Value& left, const Value& right, int line) {
  if (left.is_undefined()) RaiseUndefined(left);
  if (right.is_undefined()) RaiseUndefined(right);
  const bool numbers =
      (left.is_number() || left.is_bool()) && (right.is_number() || right.is_bool());
  if (op == "+") {
    if (left.is_string() && right.is_string()) return Value(left.as_string() + right.as_string());
    if (left.is_list() && right.is_list()) {
      std::vector<Value> items = left.as_list().items;
      items.insert(items.end(), right.as_list().items.begin(), right.as_list().items.end());
      return Value::List(std::move(items), left.as_list().is_tuple);
    }
  }
  if (op == "*" && (left.is_string() || left.is_list()) && right.is_int()) {
    if (left.is_string()) {
      std::string out;
      for (int64_t i = 0; i < right.as_int(); ++i) out += left.as_string();
      return Value(std::move(out));
    }
    std::vector<Value> items;
    for (int64_t i = 0; i < right.as_int(); ++i) {
      items.insert(items.end(), left.as_list().items.begin(), left.as_list().items.end());
    }
    return Value::List(std::move(items));
  }
  if (!numbers) {
    Raise("unsupported operand type(s) for " + op + ": '" + left.TypeName() + "' and '" +
              right.TypeName() + "'",
          line);
  }
  const bool integers = !left.is_float() && !right.is_float();
  const auto as_int = [](const Value& v) -> int64_t {
    return v.is_bool() ? v.as_bool() : v.as_int();
  };
  if (op == "/") {
    if (right.as_number() == 0) Raise("division by zero", line);
    return Value(left.as_number() / right.as_number());
  }
  if (integers) {
    const int64_t a = as_int(left);
    const int64_t b = as_int(right);
    if (op == "+") return Value(a + b);
    if (op == "-") return Value(a - b);
    if (op == "*") return Value(a * b);
    if (op == "//" || op == "%") {
      if (b == 0) Raise("integer division or modulo by zero", line);
      int64_t quotient = a / b;
      int64_t remainder = a % b;
      if (remainder != 0 && ((remainder < 0) != (b < 0))) {
        --quotient;
        remainder += b;
      }
      return op == "//" ? Value(quotient) : Value(remainder);
    }
    if (op == "**") {
      if (b < 0) return Value(std::pow(static_cast<double>(a), static_cast<double>(b)));
      // By squaring: an exponent from the template's data must not cost its value in steps.
      // Python's int has no limit; past int64's range the result wraps.
      uint64_t result = 1;
      uint64_t base = static_cast<uint64_t>(a);
      for (uint64_t exponent = static_cast<uint64_t>(b); exponent > 0; exponent >>= 1) {
        if (exponent & 1) result *= base;
        base *= base;
      }
      return Value(static_cast<int64_t>(result));
    }
  }
  const double a = left.as_number();
  const double b = right.as_number();
  if (op == "+") return Value(a + b);
  if (op == "-") return Value(a - b);
  if (op == "*") return Value(a * b);
  if (op == "**") return Value(std::pow(a, b));
  if (b == 0) Raise("float division by zero", line);
  const double quotient = std::floor(a / b);
  return op == "//" ? Value(quotient) : Value(a - quotient * b);
}

// Python's <, <=, >, >= on numbers, strings and lists.
int Compare(const Value& left, const Value& right, const std::string& op, int line) {
  if ((left.is_number() || left.is_bool()) && (right.is_number() || right.is_bool())) {
    const double a = left.as_number();
    const double b = right.as_number();
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (left.is_string() && right.is_string()) return left.as_string().compare(right.as_string());
  if (left.is_list() && right.is_list()) {
    const auto& a = left.as_list().items;
    const auto& b = right.as_list().items;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      if (!a[i].Equals(b[i])) return Compare(a[i], b[i], op, line);
    }
    return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
  }
  if (left.is_undefined()) RaiseUndefined(left);
  if (right.is_undefined()) RaiseUndefined(right);
  Raise("'" + op + "' not supported between instances of '" + left.TypeName() + "' and '" +
            right.TypeName() + "'",
        line);
}

bool Contains(const Value& container, const Value& item, int line) {
  if (container.is_string()) {
    if (!item.is_string()) {
      Raise("'in <string>' requires string as left operand, not " + item.TypeName(), line);
    }
    return container.as_string().find(item.as_string()) != std::string::npos;
  }
  if (container.is_dict()) return item.is_string() && container.as_dict().Find(item.as_string());
  if (container.is_list()) {
    for (const Value& element : container.as_list().items) {
      if (element.Equals(item)) return true;
    }
    return false;
  }
  if (container.is_undefined()) return false;
  Raise("argument of type '" + container.TypeName() + "' is not iterable", line);
}

class Evaluator {
 public:
  static constexpr int kMaxCallDepth = 200;

  Flow Execute(const Body& body, const std::shared_ptr<Scope>& scope, std::string& out) {
    for (const NodePtr& node : body) {
      const Flow flow = ExecuteNode(*node, scope, out);
      if (flow != Flow::kNormal) return flow;
    }
    return Flow::kNormal;
  }

 private:
  Flow ExecuteNode(const Node& node, const std::shared_ptr<Scope>& scope, std::string& out) {
    try {
      return ExecuteNodeUnguarded(node, scope, out);
    } catch (TemplateError& error) {
      if (error.line == 0) error.line = node.line;
      throw;
    }
  }

  Flow ExecuteNodeUnguarded(const Node& node, const std::shared_ptr<Scope>& scope,
                            std::string& out) {
    switch (node.kind) {
      case Node::Kind::kText:
        out += node.text;
        return Flow::kNormal;
      case Node::Kind::kOutput:
        out += Eval(*node.expr, scope).Str();
        return Flow::kNormal;
      case Node::Kind::kIf:
        for (size_t i = 0; i < node.conditions.size(); ++i) {
          if (node.conditions[i] == nullptr || Eval(*node.conditions[i], scope).Truthy()) {
            return Execute(node.bodies[i], scope, out);
          }
        }
        if (node.bodies.size() > node.conditions.size()) {
          return Execute(node.bodies.back(), scope, out);
        }
        return Flow::kNormal;
      case Node::Kind::kFor:
        ExecuteFor(node, scope, out);
        return Flow::kNormal;
      case Node::Kind::kSet:
        ExecuteSet(node, scope);
        return Flow::kNormal;
      case Node::Kind::kSetBlock: {
        std::string text;
        Execute(node.bodies[0], std::make_shared<Scope>(scope), text);
        Value value(std::move(text));
        if (node.filter_expr != nullptr) value = EvalWithInput(*node.filter_expr, value, scope);
        scope->Set(node.targets[0], std::move(value));
        return Flow::kNormal;
      }
      case Node::Kind::kFilterBlock: {
        std::string text;
        Execute(node.bodies[0], std::make_shared<Scope>(scope), text);
        out += EvalWithInput(*node.filter_expr, Value(std::move(text)), scope).Str();
        return Flow::kNormal;
      }
      case Node::Kind::kMacro:
        scope->Set(node.text, MakeMacro(node, node.text, scope));
        return Flow::kNormal;
      case Node::Kind::kCallBlock: {
        const Value caller = MakeMacro(node, "caller", scope);
        out += EvalCall(*node.expr, scope, &caller).Str();
        return Flow::kNormal;
      }
      case Node::Kind::kBreak:
        return Flow::kBreak;
      case Node::Kind::kContinue:
        return Flow::kContinue;
    }
    return Flow::kNormal;
  }

  static void Assign(const std::vector<std::string>& targets, const Value& value, Scope& scope,
                     int line) {
    if (targets.size() == 1) {
      scope.Set(targets[0], value);
      return;
    }
    const std::vector<Value> items = value.Iterate();
    if (items.size() != targets.size()) {
      Raise((items.size() < targets.size() ? "not enough" : "too many") +
                std::string(" values to unpack (expected ") + std::to_string(targets.size()) +
                ", got " + std::to_string(items.size()) + ")",
            line);
    }
    for (size_t i = 0; i < targets.size(); ++i) scope.Set(targets[i], items[i]);
  }

  void ExecuteSet(const Node& node, const std::shared_ptr<Scope>& scope) {
    Value value = Eval(*node.expr, scope);
    if (node.text.empty()) {
      Assign(node.targets, value, *scope, node.line);
      return;
    }
    const Value target = scope->Lookup(node.targets[0]);
    if (!target.is_dict() || !target.as_dict().is_namespace) {
      Raise("cannot assign attribute on non-namespace object", node.line);
    }
    target.mutable_dict().Set(node.text, std::move(value));
  }

  void ExecuteFor(const Node& node, const std::shared_ptr<Scope>& scope, std::string& out) {
    const Value iterable = Eval(*node.expr, scope);
    std::vector<Value> items = iterable.Iterate();
    if (node.condition != nullptr) {
      std::vector<Value> kept;
      for (const Value& item : items) {
        auto probe = std::make_shared<Scope>(scope);
        Assign(node.targets, item, *probe, node.line);
        if (Eval(*node.condition, probe).Truthy()) kept.push_back(item);
      }
      items = std::move(kept);
    }
    const int64_t length = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < length; ++i) {
      auto body_scope = std::make_shared<Scope>(scope);
      Assign(node.targets, items[i], *body_scope, node.line);
      Value loop = Value::Dict({
          {"index", Value(i + 1)},
          {"index0", Value(i)},
          {"revindex", Value(length - i)},
          {"revindex0", Value(length - i - 1)},
          {"first", Value(i == 0)},
          {"last", Value(i == length - 1)},
          {"length", Value(length)},
          {"depth", Value(1)},
          {"depth0", Value(0)},
          {"previtem", i > 0 ? items[i - 1] : Value::Undefined("there is no previous item")},
          {"nextitem", i + 1 < length ? items[i + 1] : Value::Undefined("there is no next item")},
      });
      loop.mutable_dict().Set(
          "cycle", Value::Function("cycle", [i](const CallArguments& args) {
            if (args.positional.empty()) Raise("no items for cycling given");
            return args.positional[static_cast<size_t>(i) % args.positional.size()];
          }));
      body_scope->Set("loop", loop);
      if (Execute(node.bodies[0], body_scope, out) == Flow::kBreak) break;
    }
    if (length == 0 && node.bodies.size() > 1) Execute(node.bodies[1], scope, out);
  }

  // A macro (or a call block's caller) as a callable: its parameters bound from the call's
  // arguments in a scope of its own, its body's text the result.
  Value MakeMacro(const Node& node, const std::string& name, const std::shared_ptr<Scope>& scope) {
    // Weakly: the macro is stored in the scope it captures, and a strong reference would keep
    // both alive past the render. The scope outlives every call made while rendering.
    std::weak_ptr<Scope> defining_scope = scope;
    return Value::Function(name, [this, &node, defining_scope](const CallArguments& args) {
      const std::shared_ptr<Scope> scope = defining_scope.lock();
      if (scope == nullptr) Raise("macro '" + node.text + "' called after its template ended");
      // A macro that calls itself without end fails the render, as Python's recursion limit
      // fails jinja2's, rather than the process's stack.
      if (call_depth_ >= kMaxCallDepth) Raise("maximum recursion depth exceeded in macro calls");
      ++call_depth_;
      struct Leave {
        int& depth;
        ~Leave() { --depth; }
      } leave{call_depth_};
      auto call_scope = std::make_shared<Scope>(scope);
      size_t positional = 0;
      for (size_t i = 0; i < node.parameters.size(); ++i) {
        const MacroParameter& parameter = node.parameters[i];
        const Value* given = nullptr;
        for (const auto& [key, value] : args.keyword) {
          if (key == parameter.name) given = &value;
        }
        if (given == nullptr && i < args.positional.size()) {
          given = &args.positional[i];
          ++positional;
        }
        if (given != nullptr) {
          call_scope->Set(parameter.name, *given);
        } else if (parameter.default_value != nullptr) {
          call_scope->Set(parameter.name, Eval(*parameter.default_value, call_scope));
        } else {
          call_scope->Set(parameter.name,
                          Value::Undefined("parameter '" + parameter.name + "' was not provided"));
        }
      }
      std::vector<Value> varargs(
          args.positional.begin() + std::min(positional, args.positional.size()),
          args.positional.end());
      call_scope->Set("varargs", Value::List(std::move(varargs)));
      for (const auto& [key, value] : args.keyword) {
        if (key == "caller") call_scope->Set("caller", value);
      }
      std::string text;
      Execute(node.bodies[0], call_scope, text);
      return Value(std::move(text));
    });
  }

  // A filter chain whose innermost operand is the placeholder literal: `input` in its place.
  Value EvalWithInput(const Expr& expr, const Value& input, const std::shared_ptr<Scope>& scope) {
    if (expr.kind != Expr::Kind::kFilter) return input;
    const Value operand = EvalWithInput(*expr.children[0], input, scope);
    return ApplyFilter(expr.name, operand, EvalArguments(expr, scope, 1));
  }

  CallArguments EvalArguments(const Expr& expr, const std::shared_ptr<Scope>& scope, size_t first) {
    CallArguments args;
    for (size_t i = first; i < expr.children.size(); ++i) {
      args.positional.push_back(Eval(*expr.children[i], scope));
    }
    for (const auto& [name, value] : expr.keywords) {
      args.keyword.emplace_back(name, Eval(*value, scope));
    }
    return args;
  }

  Value EvalCall(const Expr& expr, const std::shared_ptr<Scope>& scope, const Value* caller) {
    const Value callee = Eval(*expr.children[0], scope);
    CallArguments args = EvalArguments(expr, scope, 1);
    if (caller != nullptr) args.keyword.emplace_back("caller", *caller);
    if (callee.is_undefined()) RaiseUndefined(callee);
    if (!callee.is_callable()) Raise("'" + callee.TypeName() + "' is not callable", expr.line);
    return callee.as_callable().call(args);
  }

  Value Eval(const Expr& expr, const std::shared_ptr<Scope>& scope) {
    try {
      return EvalUnguarded(expr, scope);
    } catch (TemplateError& error) {
      if (error.line == 0) error.line = expr.line;
      throw;
    }
  }

  Value EvalUnguarded(const Expr& expr, const std::shared_ptr<Scope>& scope) {
    switch (expr.kind) {
      case Expr::Kind::kLiteral:
        return expr.literal;
      case Expr::Kind::kName:
        return scope->Lookup(expr.name);
      case Expr::Kind::kList:
      case Expr::Kind::kTuple: {
        std::vector<Value> items;
        for (const ExprPtr& child : expr.children) items.push_back(Eval(*child, scope));
        return Value::List(std::move(items), expr.kind == Expr::Kind::kTuple);
      }
      case Expr::Kind::kDict: {
        Value dict = Value::Dict();
        for (size_t i = 0; i + 1 < expr.children.size(); i += 2) {
          const Value key = Eval(*expr.children[i], scope);
          dict.mutable_dict().Set(key.Str(), Eval(*expr.children[i + 1], scope));
        }
        return dict;
      }
      case Expr::Kind::kAttribute: {
        const Value object = Eval(*expr.children[0], scope);
        if (object.is_undefined()) RaiseUndefined(object);
        return GetAttribute(object, expr.name);
      }
      case Expr::Kind::kItem: {
        const Value object = Eval(*expr.children[0], scope);
        if (object.is_undefined()) RaiseUndefined(object);
        return GetItem(object, Eval(*expr.children[1], scope));
      }
      case Expr::Kind::kSlice: {
        const Value object = Eval(*expr.children[0], scope);
        if (object.is_undefined()) RaiseUndefined(object);
        const auto bound = [&](size_t i) {
          return expr.children[i] == nullptr ? Value(nullptr) : Eval(*expr.children[i], scope);
        };
        return Slice(object, bound(1), bound(2), bound(3));
      }
      case Expr::Kind::kCall:
        return EvalCall(expr, scope, nullptr);
      case Expr::Kind::kFilter:
        return ApplyFilter(expr.name, Eval(*expr.children[0], scope),
                           EvalArguments(expr, scope, 1));
      case Expr::Kind::kTest: {
        const bool result =
            ApplyTest(expr.name, Eval(*expr.children[0], scope), EvalArguments(expr, scope, 1));
        return Value(result != expr.negated);
      }
      case Expr::Kind::kUnary: {
        const Value operand = Eval(*expr.children[0], scope);
        if (expr.name == "not") return Value(!operand.Truthy());
        if (operand.is_undefined()) RaiseUndefined(operand);
        if (operand.is_int()) return Value(expr.name == "-" ? -operand.as_int() : operand.as_int());
        if (operand.is_float()) {
          return Value(expr.name == "-" ? -operand.as_float() : operand.as_float());
        }
        if (operand.is_bool()) {
          const int64_t as_int = operand.as_bool() ? 1 : 0;
          return Value(expr.name == "-" ? -as_int : as_int);
        }
        Raise("bad operand type for unary " + expr.name + ": '" + operand.TypeName() + "'",
              expr.line);
      }
      case Expr::Kind::kBinary:
        return EvalBinary(expr, scope);
      case Expr::Kind::kConditional:
        if (Eval(*expr.children[0], scope).Truthy()) return Eval(*expr.children[1], scope);
        if (expr.children[2] == nullptr) {
          return Value::Undefined("the inline if-expression on line " + std::to_string(expr.line) +
                                  " evaluated to false and no else section was defined.");
        }
        return Eval(*expr.children[2], scope);
    }
    return Value();
  }

  Value EvalBinary(const Expr& expr, const std::shared_ptr<Scope>& scope) {
    const std::string& op = expr.name;
    const Value left = Eval(*expr.children[0], scope);
    if (op == "and") return left.Truthy() ? Eval(*expr.children[1], scope) : left;
    if (op == "or") return left.Truthy() ? left : Eval(*expr.children[1], scope);
    const Value right = Eval(*expr.children[1], scope);
    if (op == "~") return Value(left.Str() + right.Str());
    if (op == "==") return Value(left.Equals(right));
    if (op == "!=") return Value(!left.Equals(right));
    if (op == "in") return Value(Contains(right, left, expr.line));
    if (op == "not in") return Value(!Contains(right, left, expr.line));
    if (op == "<") return Value(Compare(left, right, op, expr.line) < 0);
    if (op == "<=") return Value(Compare(left, right, op, expr.line) <= 0);
    if (op == ">") return Value(Compare(left, right, op, expr.line) > 0);
    if (op == ">=") return Value(Compare(left, right, op, expr.line) >= 0);
    return Arithmetic(op, left, right, expr.line);
  }

  int call_depth_ = 0;
};

}  // namespace

void RenderBody(const Body& body, std::shared_ptr<Scope> globals, std::string& out) {
  Evaluator evaluator;
  evaluator.Execute(body, globals, out);
}

}  // namespace slotserve::server::jinja
