#include "server/jinja/value.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "server/jinja/utf8_text.h"

namespace slotserve::server::jinja {

void Raise(std::string message, int line) { throw TemplateError{std::move(message), line}; }

const Value* DictValue::Find(std::string_view key) const {
  for (const auto& [name, value] : entries) {
    if (name == key) return &value;
  }
  return nullptr;
}

void DictValue::Set(std::string key, Value value) {
  for (auto& [name, existing] : entries) {
    if (name == key) {
      existing = std::move(value);
      return;
    }
  }
  entries.emplace_back(std::move(key), std::move(value));
}

const Value* CallArguments::Get(std::string_view name, size_t index) const {
  for (const auto& [key, value] : keyword) {
    if (key == name) return &value;
  }
  return index < positional.size() ? &positional[index] : nullptr;
}

Value Value::List(std::vector<Value> items, bool is_tuple) {
  auto list = std::make_shared<ListValue>();
  list->items = std::move(items);
  list->is_tuple = is_tuple;
  return Value(std::move(list));
}

Value Value::Dict(std::vector<std::pair<std::string, Value>> entries) {
  auto dict = std::make_shared<DictValue>();
  dict->entries = std::move(entries);
  return Value(std::move(dict));
}

Value Value::Function(std::string name, std::function<Value(const CallArguments&)> call) {
  return Value(std::make_shared<CallableValue>(CallableValue{std::move(name), std::move(call)}));
}

Value Value::FromJson(const nlohmann::ordered_json& json) {
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null:
      return Value(nullptr);
    case nlohmann::ordered_json::value_t::boolean:
      return Value(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value(json.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const uint64_t u = json.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
      return Value(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float:
      return Value(json.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return Value(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(json.size());
      for (const auto& item : json) items.push_back(FromJson(item));
      return List(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      std::vector<std::pair<std::string, Value>> entries;
      entries.reserve(json.size());
      for (const auto& [key, item] : json.items()) entries.emplace_back(key, FromJson(item));
      return Dict(std::move(entries));
    }
    default:
      return Value(nullptr);  // binary and discarded values never come from parsed JSON
  }
}

double Value::as_number() const {
  if (is_int()) return static_cast<double>(as_int());
  if (is_bool()) return as_bool() ? 1.0 : 0.0;
  return as_float();
}

bool Value::Truthy() const {
  if (is_undefined() || is_none()) return false;
  if (is_bool()) return as_bool();
  if (is_int()) return as_int() != 0;
  if (is_float()) return as_float() != 0.0;
  if (is_string()) return !as_string().empty();
  if (is_list()) return !as_list().items.empty();
  if (is_dict()) return !as_dict().entries.empty();
  return true;
}

std::string PythonFloatRepr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  const auto result =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  std::string text(buffer, result.ptr);
  std::string sign;
  if (text[0] == '-') {
    sign = "-";
    text.erase(0, 1);
  }
  const size_t e = text.find('e');
  std::string digits = text.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exponent = std::stoi(text.substr(e + 1));
  const int point = exponent + 1;  // digits before the decimal point
  const int count = static_cast<int>(digits.size());
  if (point > -4 && point <= 16) {
    if (point <= 0) return sign + "0." + std::string(-point, '0') + digits;
    if (point >= count) return sign + digits + std::string(point - count, '0') + ".0";
    return sign + digits.substr(0, point) + "." + digits.substr(point);
  }
  std::string mantissa = digits.substr(0, 1);
  if (count > 1) mantissa += "." + digits.substr(1);
  char exponent_text[16];
  std::snprintf(exponent_text, sizeof exponent_text, "e%c%02d", exponent < 0 ? '-' : '+',
                std::abs(exponent));
  return sign + mantissa + exponent_text;
}

std::string PythonStringRepr(std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  out += quote;
  return out;
}

std::string Value::Str() const {
  if (is_undefined()) return "";
  if (is_string()) return as_string();
  return Repr();
}

std::string Value::Repr() const {
  if (is_undefined()) return "Undefined";
  if (is_none()) return "None";
  if (is_bool()) return as_bool() ? "True" : "False";
  if (is_int()) return std::to_string(as_int());
  if (is_float()) return PythonFloatRepr(as_float());
  if (is_string()) return PythonStringRepr(as_string());
  if (is_list()) {
    const ListValue& list = as_list();
    std::string out = list.is_tuple ? "(" : "[";
    for (size_t i = 0; i < list.items.size(); ++i) {
      if (i > 0) out += ", ";
      out += list.items[i].Repr();
    }
    if (list.is_tuple && list.items.size() == 1) out += ",";
    return out + (list.is_tuple ? ")" : "]");
  }
  if (is_dict()) {
    const DictValue& dict = as_dict();
    std::string out = dict.is_namespace ? "<Namespace {" : "{";
    for (size_t i = 0; i < dict.entries.size(); ++i) {
      if (i > 0) out += ", ";
      out += PythonStringRepr(dict.entries[i].first) + ": " + dict.entries[i].second.Repr();
    }
    return out + (dict.is_namespace ? "}>" : "}");
  }
  return "<function " + as_callable().name + ">";
}

std::string Value::TypeName() const {
  if (is_undefined()) return "jinja2.runtime.Undefined object";
  if (is_none()) return "None";
  if (is_bool()) return "bool object";
  if (is_int()) return "int object";
  if (is_float()) return "float object";
  if (is_string()) return "str object";
  if (is_list()) return as_list().is_tuple ? "tuple object" : "list object";
  if (is_dict()) return as_dict().is_namespace ? "Namespace object" : "dict object";
  return "function object";
}

bool Value::Equals(const Value& other) const {
  const bool numeric = (is_number() || is_bool()) && (other.is_number() || other.is_bool());
  if (numeric) {
    if (is_float() || other.is_float()) return as_number() == other.as_number();
    const int64_t left = is_bool() ? as_bool() : as_int();
    const int64_t right = other.is_bool() ? other.as_bool() : other.as_int();
    return left == right;
  }
  if (is_undefined() || other.is_undefined()) return is_undefined() && other.is_undefined();
  if (is_none() || other.is_none()) return is_none() && other.is_none();
  if (is_string() && other.is_string()) return as_string() == other.as_string();
  if (is_list() && other.is_list()) {
    const auto& a = as_list().items;
    const auto& b = other.as_list().items;
    if (a.size() != b.size() || as_list().is_tuple != other.as_list().is_tuple) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].Equals(b[i])) return false;
    }
    return true;
  }
  if (is_dict() && other.is_dict()) {
    const auto& a = as_dict().entries;
    if (a.size() != other.as_dict().entries.size()) return false;
    for (const auto& [key, value] : a) {
      const Value* found = other.as_dict().Find(key);
      if (found == nullptr || !value.Equals(*found)) return false;
    }
    return true;
  }
  if (is_callable() && other.is_callable()) return &as_callable() == &other.as_callable();
  return false;
}

std::vector<Value> Value::Iterate() const {
  if (is_undefined()) return {};
  if (is_list()) return as_list().items;
  if (is_dict()) {
    std::vector<Value> keys;
    for (const auto& entry : as_dict().entries) keys.emplace_back(entry.first);
    return keys;
  }
  if (is_string()) {
    std::vector<Value> characters;
    for (const std::string& character : SplitCodePoints(as_string())) {
      characters.emplace_back(character);
    }
    return characters;
  }
  Raise("'" + TypeName() + "' is not iterable");
}

}  // namespace slotserve::server::jinja
