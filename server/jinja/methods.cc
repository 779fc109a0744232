// Attribute and item access, and the methods of str, dict and list that chat templates call
// (Python's semantics; the sandbox HF renders in has no mutating methods, so neither do we).
#include <algorithm>
#include <cctype>

#include "server/jinja/builtins.h"
#include "server/jinja/utf8_text.h"

namespace slotserve::server::jinja {
namespace {

bool IsPythonSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string StripChars(const std::string& text, const Value* chars, bool left, bool right) {
  const auto strip = [&](char c) {
    if (chars == nullptr || chars->is_none()) return IsPythonSpace(c);
    return chars->as_string().find(c) != std::string::npos;
  };
  size_t begin = 0;
  size_t end = text.size();
  if (left) {
    while (begin < end && strip(text[begin])) ++begin;
  }
  if (right) {
    while (end > begin && strip(text[end - 1])) --end;
  }
  return text.substr(begin, end - begin);
}

std::vector<Value> Split(const std::string& text, const Value* separator, int64_t max_splits) {
  std::vector<Value> parts;
  if (separator == nullptr || separator->is_none()) {
    size_t i = 0;
    while (i < text.size()) {
      while (i < text.size() && IsPythonSpace(text[i])) ++i;
      if (i == text.size()) break;
      if (max_splits >= 0 && static_cast<int64_t>(parts.size()) == max_splits) {
        size_t end = text.size();
        while (end > i && IsPythonSpace(text[end - 1])) --end;
        parts.emplace_back(text.substr(i, end - i));
        break;
      }
      size_t end = i;
      while (end < text.size() && !IsPythonSpace(text[end])) ++end;
      parts.emplace_back(text.substr(i, end - i));
      i = end;
    }
    return parts;
  }
  const std::string& sep = separator->as_string();
  if (sep.empty()) Raise("empty separator");
  size_t start = 0;
  for (;;) {
    const size_t found = text.find(sep, start);
    if (found == std::string::npos ||
        (max_splits >= 0 && static_cast<int64_t>(parts.size()) == max_splits)) {
      parts.emplace_back(text.substr(start));
      return parts;
    }
    parts.emplace_back(text.substr(start, found - start));
    start = found + sep.size();
  }
}

std::string Replace(const std::string& text, const std::string& old_text,
                    const std::string& new_text, int64_t count) {
  if (old_text.empty()) {
    std::string out;
    int64_t done = 0;
    for (const std::string& character : SplitCodePoints(text)) {
      if (count < 0 || done < count) {
        out += new_text;
        ++done;
      }
      out += character;
    }
    if (count < 0 || done < count) out += new_text;
    return out;
  }
  std::string out;
  size_t start = 0;
  int64_t done = 0;
  for (;;) {
    const size_t found = text.find(old_text, start);
    if (found == std::string::npos || (count >= 0 && done == count)) break;
    out += text.substr(start, found - start) + new_text;
    start = found + old_text.size();
    ++done;
  }
  return out + text.substr(start);
}

bool AffixMatches(const std::string& text, const Value& affix, bool prefix) {
  const auto one = [&](const std::string& a) {
    if (a.size() > text.size()) return false;
    return prefix ? text.compare(0, a.size(), a) == 0
                  : text.compare(text.size() - a.size(), a.size(), a) == 0;
  };
  if (affix.is_list()) {
    return std::any_of(affix.as_list().items.begin(), affix.as_list().items.end(),
                       [&](const Value& a) { return a.is_string() && one(a.as_string()); });
  }
  if (!affix.is_string()) Raise("startswith/endswith takes a string or a tuple of strings");
  return one(affix.as_string());
}

int64_t IntArgument(const CallArguments& args, const char* name, size_t index, int64_t fallback) {
  const Value* value = args.Get(name, index);
  if (value == nullptr || value->is_none()) return fallback;
  if (!value->is_int()) Raise(std::string("argument '") + name + "' must be an integer");
  return value->as_int();
}

const std::string& StringArgument(const CallArguments& args, const char* method, size_t index) {
  if (index >= args.positional.size() || !args.positional[index].is_string()) {
    Raise(std::string(method) + "() takes a string argument");
  }
  return args.positional[index].as_string();
}

Value StringMethod(const std::string& text, const std::string& name, const CallArguments& args) {
  if (name == "strip") return Value(StripChars(text, args.Get("chars", 0), true, true));
  if (name == "lstrip") return Value(StripChars(text, args.Get("chars", 0), true, false));
  if (name == "rstrip") return Value(StripChars(text, args.Get("chars", 0), false, true));
  if (name == "split") {
    return Value::List(Split(text, args.Get("sep", 0), IntArgument(args, "maxsplit", 1, -1)));
  }
  if (name == "startswith") return Value(AffixMatches(text, args.positional.at(0), true));
  if (name == "endswith") return Value(AffixMatches(text, args.positional.at(0), false));
  if (name == "upper") return Value(ChangeCase(text, CaseChange::kUpper));
  if (name == "lower") return Value(ChangeCase(text, CaseChange::kLower));
  if (name == "title") return Value(ChangeCase(text, CaseChange::kTitle));
  if (name == "capitalize") return Value(ChangeCase(text, CaseChange::kCapitalize));
  if (name == "replace") {
    return Value(Replace(text, StringArgument(args, "replace", 0),
                         StringArgument(args, "replace", 1), IntArgument(args, "count", 2, -1)));
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "count") {
    const std::string& needle = StringArgument(args, name.c_str(), 0);
    if (name == "count") {
      if (needle.empty()) return Value(static_cast<int64_t>(CodePointCount(text) + 1));
      int64_t count = 0;
      for (size_t at = text.find(needle); at != std::string::npos;
           at = text.find(needle, at + needle.size())) {
        ++count;
      }
      return Value(count);
    }
    const size_t at = name == "rfind" ? text.rfind(needle) : text.find(needle);
    if (at == std::string::npos) {
      if (name == "index") Raise("substring not found");
      return Value(-1);
    }
    return Value(static_cast<int64_t>(CodePointCount(text.substr(0, at))));
  }
  if (name == "join") {
    std::string out;
    const std::vector<Value> items = args.positional.at(0).Iterate();
    for (size_t i = 0; i < items.size(); ++i) out += (i > 0 ? text : "") + items[i].Str();
    return Value(std::move(out));
  }
  if (name == "splitlines") {
    std::vector<Value> lines;
    size_t start = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n' || text[i] == '\r') {
        lines.emplace_back(text.substr(start, i - start));
        if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
        start = i + 1;
      }
    }
    if (start < text.size()) lines.emplace_back(text.substr(start));
    return Value::List(std::move(lines));
  }
  if (name == "isdigit" || name == "isalpha" || name == "isspace" || name == "isalnum") {
    if (text.empty()) return Value(false);
    return Value(std::all_of(text.begin(), text.end(), [&](char c) {
      const auto byte = static_cast<unsigned char>(c);
      if (name == "isdigit") return std::isdigit(byte) != 0;
      if (name == "isalpha") return std::isalpha(byte) != 0;
      if (name == "isalnum") return std::isalnum(byte) != 0;
      return IsPythonSpace(c);
    }));
  }
  Raise("'str object' has no attribute '" + name + "'");
}

bool IsStringMethod(const std::string& name) {
  static constexpr std::string_view kNames[] = {
      "strip", "lstrip", "rstrip",     "split",   "startswith", "endswith", "upper",
      "lower", "title",  "capitalize", "replace", "find",       "rfind",    "index",
      "count", "join",   "splitlines", "isdigit", "isalpha",    "isspace",  "isalnum"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

Value DictMethod(const Value& dict, const std::string& name, const CallArguments& args) {
  const DictValue& entries = dict.as_dict();
  if (name == "items" || name == "keys" || name == "values") {
    std::vector<Value> out;
    for (const auto& [key, value] : entries.entries) {
      if (name == "items") {
        out.push_back(Value::List({Value(key), value}, /*is_tuple=*/true));
      } else {
        out.push_back(name == "keys" ? Value(key) : value);
      }
    }
    return Value::List(std::move(out));
  }
  // get
  const Value& key = args.positional.at(0);
  const Value* found = key.is_string() ? entries.Find(key.as_string()) : nullptr;
  if (found != nullptr) return *found;
  return args.positional.size() > 1 ? args.positional[1] : Value(nullptr);
}

Value BindMethod(const Value& object, const std::string& name,
                 Value (*method)(const Value&, const std::string&, const CallArguments&)) {
  return Value::Function(name, [object, name, method](const CallArguments& args) {
    return method(object, name, args);
  });
}

Value CallStringMethod(const Value& object, const std::string& name, const CallArguments& args) {
  return StringMethod(object.as_string(), name, args);
}

}  // namespace

void RaiseUndefined(const Value& undefined) {
  Raise(undefined.undefined_hint().empty() ? "value is undefined" : undefined.undefined_hint());
}

Value GetAttribute(const Value& object, const std::string& name) {
  if (object.is_string() && IsStringMethod(name)) return BindMethod(object, name, CallStringMethod);
  if (object.is_dict()) {
    if (!object.as_dict().is_namespace &&
        (name == "items" || name == "keys" || name == "values" || name == "get")) {
      return BindMethod(object, name, DictMethod);
    }
    if (const Value* found = object.as_dict().Find(name)) return *found;
  }
  return Value::Undefined("'" + object.TypeName() + "' has no attribute '" + name + "'");
}

Value GetItem(const Value& object, const Value& key) {
  if (object.is_dict() && key.is_string()) {
    if (const Value* found = object.as_dict().Find(key.as_string())) return *found;
  }
  if ((object.is_list() || object.is_string()) && (key.is_int() || key.is_bool())) {
    int64_t index = key.is_bool() ? key.as_bool() : key.as_int();
    if (object.is_list()) {
      const auto& items = object.as_list().items;
      const auto size = static_cast<int64_t>(items.size());
      if (index < 0) index += size;
      if (index >= 0 && index < size) return items[static_cast<size_t>(index)];
    } else {
      const std::vector<std::string> characters = SplitCodePoints(object.as_string());
      const auto size = static_cast<int64_t>(characters.size());
      if (index < 0) index += size;
      if (index >= 0 && index < size) return Value(characters[static_cast<size_t>(index)]);
    }
    return Value::Undefined("'" + object.TypeName() + "' has no element " + key.Repr());
  }
  if (key.is_string()) return GetAttribute(object, key.as_string());
  return Value::Undefined("'" + object.TypeName() + "' has no element " + key.Repr());
}

Value Slice(const Value& object, const Value& start, const Value& stop, const Value& step) {
  std::vector<Value> items;
  if (object.is_list()) {
    items = object.as_list().items;
  } else if (object.is_string()) {
    for (std::string& c : SplitCodePoints(object.as_string())) items.emplace_back(std::move(c));
  } else {
    Raise("'" + object.TypeName() + "' object is not subscriptable");
  }
  const auto size = static_cast<int64_t>(items.size());
  const auto bound = [](const Value& v, const char* what) -> const Value* {
    if (v.is_none()) return nullptr;
    if (!v.is_int()) Raise(std::string("slice ") + what + " must be an integer or None");
    return &v;
  };
  const Value* step_value = bound(step, "step");
  const int64_t stride = step_value == nullptr ? 1 : step_value->as_int();
  if (stride == 0) Raise("slice step cannot be zero");
  const auto clamp = [&](const Value* v, int64_t fallback) {
    if (v == nullptr) return fallback;
    int64_t i = v->as_int();
    if (i < 0) i += size;
    if (stride > 0) return std::clamp<int64_t>(i, 0, size);
    return std::clamp<int64_t>(i, -1, size - 1);
  };
  const int64_t first = clamp(bound(start, "start"), stride > 0 ? 0 : size - 1);
  const int64_t last = clamp(bound(stop, "stop"), stride > 0 ? size : -1);
  std::vector<Value> out;
  for (int64_t i = first; stride > 0 ? i < last : i > last; i += stride) {
    out.push_back(items[static_cast<size_t>(i)]);
  }
  if (object.is_list()) return Value::List(std::move(out), object.as_list().is_tuple);
  std::string text;
  for (const Value& c : out) text += c.as_string();
  return Value(std::move(text));
}

}  // namespace slotserve::server::jinja
