// The values a chat template computes with, as Python's jinja2 has them: undefined, None,
// booleans, integers, floats, strings, lists (and tuples), dicts (insertion-ordered, as Python
// dicts are; a namespace() is a dict whose attributes a template may set) and callables
// (macros, globals such as raise_exception, bound methods). Lists and dicts are shared, not
// copied: the sandbox HF renders in forbids mutating them, so sharing is never observable
// except through a namespace.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "nlohmann/json.hpp"

namespace slotserve::server::jinja {

class Value;

struct ListValue {
  std::vector<Value> items;
  bool is_tuple = false;  // only for repr(): (1, 2) rather than [1, 2]
};

struct DictValue {
  std::vector<std::pair<std::string, Value>> entries;
  bool is_namespace = false;  // namespace(): `{% set ns.x = ... %}` may assign to it
  const Value* Find(std::string_view key) const;
  void Set(std::string key, Value value);
};

// Positional and keyword arguments of a call, evaluated.
struct CallArguments {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
  // The keyword argument `name`, or else positional argument `index`, or null.
  const Value* Get(std::string_view name, size_t index) const;
};

struct CallableValue {
  std::string name;
  std::function<Value(const CallArguments&)> call;
};

// jinja2's default Undefined: prints as "", is falsy, iterates as empty; what it was (a name, or
// "'dict object' has no attribute 'x'") is the message of the error that using it raises.
struct UndefinedValue {
  std::string hint;
};

class Value {
 public:
  using Data = std::variant<UndefinedValue, std::nullptr_t, bool, int64_t, double, std::string,
                            std::shared_ptr<ListValue>, std::shared_ptr<DictValue>,
                            std::shared_ptr<CallableValue>>;

  Value() : data_(UndefinedValue{}) {}
  Value(std::nullptr_t) : data_(nullptr) {}
  Value(bool b) : data_(b) {}
  Value(int64_t i) : data_(i) {}
  Value(int i) : data_(int64_t{i}) {}
  Value(double d) : data_(d) {}
  Value(std::string s) : data_(std::move(s)) {}
  Value(const char* s) : data_(std::string(s)) {}
  Value(std::shared_ptr<ListValue> list) : data_(std::move(list)) {}
  Value(std::shared_ptr<DictValue> dict) : data_(std::move(dict)) {}
  Value(std::shared_ptr<CallableValue> callable) : data_(std::move(callable)) {}

  static Value Undefined(std::string hint) { return Value(UndefinedValue{std::move(hint)}); }
  static Value List(std::vector<Value> items, bool is_tuple = false);
  static Value Dict(std::vector<std::pair<std::string, Value>> entries = {});
  static Value Function(std::string name, std::function<Value(const CallArguments&)> call);
  static Value FromJson(const nlohmann::ordered_json& json);

  bool is_undefined() const { return std::holds_alternative<UndefinedValue>(data_); }
  bool is_none() const { return std::holds_alternative<std::nullptr_t>(data_); }
  bool is_bool() const { return std::holds_alternative<bool>(data_); }
  bool is_int() const { return std::holds_alternative<int64_t>(data_); }
  bool is_float() const { return std::holds_alternative<double>(data_); }
  bool is_number() const { return is_int() || is_float(); }
  bool is_string() const { return std::holds_alternative<std::string>(data_); }
  bool is_list() const { return std::holds_alternative<std::shared_ptr<ListValue>>(data_); }
  bool is_dict() const { return std::holds_alternative<std::shared_ptr<DictValue>>(data_); }
  bool is_callable() const { return std::holds_alternative<std::shared_ptr<CallableValue>>(data_); }

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const { return std::get<int64_t>(data_); }
  double as_float() const { return std::get<double>(data_); }
  // An integer or boolean (Python's bool is an int) or float, as a double.
  double as_number() const;
  const std::string& as_string() const { return std::get<std::string>(data_); }
  const ListValue& as_list() const { return *std::get<std::shared_ptr<ListValue>>(data_); }
  const DictValue& as_dict() const { return *std::get<std::shared_ptr<DictValue>>(data_); }
  DictValue& mutable_dict() const { return *std::get<std::shared_ptr<DictValue>>(data_); }
  const CallableValue& as_callable() const {
    return *std::get<std::shared_ptr<CallableValue>>(data_);
  }
  const Data& data() const { return data_; }
  const std::string& undefined_hint() const { return std::get<UndefinedValue>(data_).hint; }

  // Python's bool(x).
  bool Truthy() const;
  // Python's str(x) (undefined prints as ""), and repr(x) as str() of a list shows its items.
  std::string Str() const;
  std::string Repr() const;
  // jinja2's names of types in messages: "dict object", "str object", ...
  std::string TypeName() const;
  // Python's ==.
  bool Equals(const Value& other) const;
  // The items a for loop walks: a list's items, a dict's keys, a string's characters; an
  // undefined value walks nothing. Raises for what is not iterable.
  std::vector<Value> Iterate() const;

 private:
  explicit Value(UndefinedValue undefined) : data_(std::move(undefined)) {}
  Data data_;
};

// An error while rendering or parsing: what failed, with the template line when known. The
// interpreter raises it and Template (template.h) turns it into an absl::Status.
struct TemplateError {
  std::string message;
  int line = 0;
};
[[noreturn]] void Raise(std::string message, int line = 0);

// Python's repr of a float: the shortest text that reads back as the same double, "1.0",
// "1e-05", "1e+16", "inf", "nan".
std::string PythonFloatRepr(double value);
// Python's repr of a str: quotes chosen as Python chooses them, escapes for control characters.
std::string PythonStringRepr(std::string_view text);

}  // namespace slotserve::server::jinja
