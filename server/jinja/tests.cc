// jinja2's tests (`x is defined`, `x is string`, ...), as jinja2.tests defines them.
#include <algorithm>
#include <cctype>

#include "server/jinja/builtins.h"
#include "server/jinja/utf8_text.h"

namespace slotserve::server::jinja {
namespace {

const Value& Argument(const CallArguments& arguments, const std::string& test) {
  if (arguments.positional.empty()) Raise("test '" + test + "' takes an argument");
  return arguments.positional[0];
}

int Order(const Value& a, const Value& b) {
  if ((a.is_number() || a.is_bool()) && (b.is_number() || b.is_bool())) {
    return a.as_number() < b.as_number() ? -1 : a.as_number() > b.as_number() ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) return a.as_string().compare(b.as_string());
  Raise("cannot compare '" + a.TypeName() + "' and '" + b.TypeName() + "'");
}

constexpr std::string_view kTestNames[] = {
    "!=",       "<",           "<=",      "==",        ">",       ">=",       "boolean", "callable",
    "defined",  "divisibleby", "eq",      "equalto",   "escaped", "even",     "false",   "float",
    "ge",       "greaterthan", "gt",      "in",        "integer", "iterable", "le",      "lessthan",
    "lower",    "lt",          "mapping", "ne",        "none",    "number",   "odd",     "sameas",
    "sequence", "string",      "true",    "undefined", "upper"};

}  // namespace

bool IsTest(std::string_view name) {
  return std::find(std::begin(kTestNames), std::end(kTestNames), name) != std::end(kTestNames);
}

bool ApplyTest(const std::string& name, const Value& input, const CallArguments& arguments) {
  if (name == "defined") return !input.is_undefined();
  if (name == "undefined") return input.is_undefined();
  if (name == "none") return input.is_none();
  if (name == "boolean") return input.is_bool();
  if (name == "true") return input.is_bool() && input.as_bool();
  if (name == "false") return input.is_bool() && !input.as_bool();
  if (name == "integer") return input.is_int();
  if (name == "float") return input.is_float();
  if (name == "number") return input.is_number() || input.is_bool();
  if (name == "string") return input.is_string();
  if (name == "mapping") return input.is_dict();
  if (name == "iterable")
    return input.is_string() || input.is_list() || input.is_dict() || input.is_undefined();
  if (name == "sequence") return input.is_string() || input.is_list() || input.is_dict();
  if (name == "callable") return input.is_callable();
  if (name == "escaped") return false;
  if (name == "lower" || name == "upper") {
    if (!input.is_string()) Raise("test '" + name + "' needs a string, got " + input.TypeName());
    return AllCased(input.as_string(), name == "upper");
  }
  if (name == "eq" || name == "equalto" || name == "==")
    return input.Equals(Argument(arguments, name));
  if (name == "ne" || name == "!=") return !input.Equals(Argument(arguments, name));
  if (name == "lt" || name == "lessthan" || name == "<")
    return Order(input, Argument(arguments, name)) < 0;
  if (name == "le" || name == "<=") return Order(input, Argument(arguments, name)) <= 0;
  if (name == "gt" || name == "greaterthan" || name == ">")
    return Order(input, Argument(arguments, name)) > 0;
  if (name == "ge" || name == ">=") return Order(input, Argument(arguments, name)) >= 0;
  if (name == "sameas") {
    const Value& other = Argument(arguments, name);
    if (input.is_none() || input.is_bool() || input.is_undefined())
      return input.Equals(other) && input.TypeName() == other.TypeName();
    return input.Equals(other) && (input.is_int() || input.is_string());
  }
  if (name == "in") {
    const Value& container = Argument(arguments, name);
    if (container.is_string())
      return input.is_string() &&
             container.as_string().find(input.as_string()) != std::string::npos;
    if (container.is_dict())
      return input.is_string() && container.as_dict().Find(input.as_string()) != nullptr;
    for (const Value& item : container.Iterate()) {
      if (item.Equals(input)) return true;
    }
    return false;
  }
  if (name == "divisibleby" || name == "even" || name == "odd") {
    if (!input.is_int()) Raise("test '" + name + "' needs an integer, got " + input.TypeName());
    if (name == "even") return input.as_int() % 2 == 0;
    if (name == "odd") return input.as_int() % 2 != 0;
    const Value& divisor = Argument(arguments, name);
    if (!divisor.is_int() || divisor.as_int() == 0) Raise("divisibleby needs a non-zero integer");
    return input.as_int() % divisor.as_int() == 0;
  }
  Raise("no test named '" + name + "'");
}

}  // namespace slotserve::server::jinja
