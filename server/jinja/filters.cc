// jinja2's filters that chat templates use, with jinja2.filters' semantics, and transformers'
// own tojson (Python's json.dumps, not jinja2's HTML-safe one).
#include <algorithm>
#include <cctype>
#include <cmath>

#include "server/jinja/builtins.h"
#include "server/jinja/utf8_text.h"

namespace slotserve::server::jinja {
namespace {

// jinja2's make_attrgetter: "a.b.0" walks attributes and items; an integer part is an index.
Value GetPath(const Value& object, const std::string& path) {
  Value current = object;
  size_t start = 0;
  for (;;) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? dot : dot - start);
    const bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit);
    current = numeric ? GetItem(current, Value(static_cast<int64_t>(std::stoll(part))))
                      : GetItem(current, Value(part));
    if (dot == std::string::npos) return current;
    start = dot + 1;
  }
}

const Value* Keyword(const CallArguments& args, std::string_view name) {
  for (const auto& [key, value] : args.keyword) {
    if (key == name) return &value;
  }
  return nullptr;
}

bool BoolArgument(const CallArguments& args, const char* name, size_t index, bool fallback) {
  const Value* value = args.Get(name, index);
  return value == nullptr ? fallback : value->Truthy();
}

CallArguments Rest(const CallArguments& args, size_t from) {
  CallArguments rest;
  if (from < args.positional.size()) {
    rest.positional.assign(args.positional.begin() + from, args.positional.end());
  }
  return rest;
}

// select/reject/selectattr/rejectattr: the items whose (attribute's) test passes or fails.
Value FilterItems(const Value& input, const CallArguments& args, bool by_attribute, bool keep) {
  const size_t test_index = by_attribute ? 1 : 0;
  std::string attribute;
  if (by_attribute) {
    if (args.positional.empty() || !args.positional[0].is_string()) {
      Raise("selectattr/rejectattr need an attribute name");
    }
    attribute = args.positional[0].as_string();
  }
  const bool has_test = args.positional.size() > test_index;
  const std::string test = has_test ? args.positional[test_index].Str() : "";
  const CallArguments test_args = Rest(args, test_index + 1);
  std::vector<Value> out;
  for (const Value& item : input.Iterate()) {
    const Value subject = by_attribute ? GetPath(item, attribute) : item;
    const bool passes = has_test ? ApplyTest(test, subject, test_args) : subject.Truthy();
    if (passes == keep) out.push_back(item);
  }
  return Value::List(std::move(out));
}

Value MapItems(const Value& input, const CallArguments& args) {
  std::vector<Value> out;
  if (const Value* attribute = Keyword(args, "attribute")) {
    const Value* fallback = Keyword(args, "default");
    for (const Value& item : input.Iterate()) {
      Value value = GetPath(item, attribute->Str());
      out.push_back(value.is_undefined() && fallback != nullptr ? *fallback : value);
    }
    return Value::List(std::move(out));
  }
  if (args.positional.empty()) Raise("map needs a filter name or attribute=");
  const std::string filter = args.positional[0].Str();
  const CallArguments filter_args = Rest(args, 1);
  for (const Value& item : input.Iterate()) out.push_back(ApplyFilter(filter, item, filter_args));
  return Value::List(std::move(out));
}

Value ToJson(const Value& input, const CallArguments& args) {
  JsonDumpOptions options;
  options.ensure_ascii = BoolArgument(args, "ensure_ascii", 0, false);
  if (const Value* indent = args.Get("indent", 1); indent != nullptr && !indent->is_none()) {
    if (indent->is_string()) {
      options.indent_text = indent->as_string();
      if (options.indent_text.empty()) options.indent = 0;
    } else {
      options.indent = static_cast<int>(indent->as_int());
    }
    options.item_separator = ",";
  }
  if (const Value* separators = args.Get("separators", 2);
      separators != nullptr && !separators->is_none()) {
    const auto& parts = separators->as_list().items;
    if (parts.size() != 2) Raise("tojson separators must be a pair of strings");
    options.item_separator = parts[0].Str();
    options.key_separator = parts[1].Str();
  }
  options.sort_keys = BoolArgument(args, "sort_keys", 3, false);
  return Value(JsonDump(input, options));
}

Value Indent(const std::string& text, const CallArguments& args) {
  const Value* width = args.Get("width", 0);
  const std::string prefix = width == nullptr ? "    "
                             : width->is_string()
                                 ? width->as_string()
                                 : std::string(static_cast<size_t>(width->as_int()), ' ');
  const bool first = BoolArgument(args, "first", 1, false);
  const bool blank = BoolArgument(args, "blank", 2, false);
  std::string out;
  size_t start = 0;
  bool is_first = true;
  std::string body = text;
  for (;;) {
    const size_t newline = body.find('\n', start);
    const std::string line =
        body.substr(start, newline == std::string::npos ? newline : newline - start);
    const bool indent = is_first ? first : (blank || !line.empty());
    out += (indent ? prefix : "") + line;
    if (newline == std::string::npos) break;
    out += '\n';
    start = newline + 1;
    is_first = false;
  }
  return Value(std::move(out));
}

const Value& First(const CallArguments& args, const char* filter) {
  if (args.positional.empty()) Raise(std::string("filter '") + filter + "' takes an argument");
  return args.positional[0];
}

constexpr std::string_view kFilterNames[] = {
    "abs",    "attr",   "capitalize",  "count",      "d",      "default",    "e",       "escape",
    "first",  "float",  "forceescape", "indent",     "int",    "items",      "join",    "last",
    "length", "list",   "lower",       "map",        "reject", "rejectattr", "replace", "reverse",
    "round",  "safe",   "select",      "selectattr", "string", "sum",        "title",   "tojson",
    "trim",   "unique", "upper",       "wordcount"};

}  // namespace

bool IsFilter(std::string_view name) {
  return std::find(std::begin(kFilterNames), std::end(kFilterNames), name) !=
         std::end(kFilterNames);
}

Value ApplyFilter(const std::string& name, const Value& input, const CallArguments& args) {
  if (name == "default" || name == "d") {
    const bool boolean = BoolArgument(args, "boolean", 1, false);
    const bool use_default = input.is_undefined() || (boolean && !input.Truthy());
    if (!use_default) return input;
    const Value* fallback = args.Get("default_value", 0);
    return fallback == nullptr ? Value("") : *fallback;
  }
  if (name == "tojson") return ToJson(input, args);
  if (name == "safe" || name == "string" || name == "e" || name == "escape" ||
      name == "forceescape") {
    if (name == "safe" || name == "string") return Value(input.Str());
    std::string out;
    for (const char c : input.Str()) {
      switch (c) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '"':
          out += "&#34;";
          break;
        case '\'':
          out += "&#39;";
          break;
        default:
          out += c;
      }
    }
    return Value(std::move(out));
  }
  if (name == "length" || name == "count") {
    if (input.is_string()) return Value(static_cast<int64_t>(CodePointCount(input.as_string())));
    if (input.is_list()) return Value(static_cast<int64_t>(input.as_list().items.size()));
    if (input.is_dict()) return Value(static_cast<int64_t>(input.as_dict().entries.size()));
    if (input.is_undefined()) return Value(0);
    Raise("object of type '" + input.TypeName() + "' has no len()");
  }
  if (input.is_undefined() && name != "list" && name != "join" && name != "items") {
    RaiseUndefined(input);
  }
  if (name == "trim") {
    CallArguments strip_args;
    if (const Value* chars = args.Get("chars", 0)) strip_args.positional.push_back(*chars);
    return GetAttribute(Value(input.Str()), "strip").as_callable().call(strip_args);
  }
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") {
    return GetAttribute(Value(input.Str()), name).as_callable().call({});
  }
  if (name == "replace") {
    CallArguments replace_args;
    replace_args.positional = {First(args, "replace"), args.positional.at(1)};
    if (args.positional.size() > 2) replace_args.positional.push_back(args.positional[2]);
    return GetAttribute(Value(input.Str()), "replace").as_callable().call(replace_args);
  }
  if (name == "first" || name == "last") {
    const std::vector<Value> items = input.Iterate();
    if (items.empty()) return Value::Undefined("No " + name + " item, sequence was empty.");
    return name == "first" ? items.front() : items.back();
  }
  if (name == "list") return Value::List(input.Iterate());
  if (name == "items") {
    if (input.is_undefined()) return Value::List({});
    if (!input.is_dict()) Raise("can only get item pairs from a mapping");
    return GetAttribute(input, "items").as_callable().call({});
  }
  if (name == "join") {
    const Value* separator = args.Get("d", 0);
    const Value* attribute = Keyword(args, "attribute");
    std::string out;
    bool first = true;
    for (const Value& item : input.Iterate()) {
      out += first ? "" : (separator == nullptr ? "" : separator->Str());
      out += (attribute != nullptr ? GetPath(item, attribute->Str()) : item).Str();
      first = false;
    }
    return Value(std::move(out));
  }
  if (name == "reverse") {
    if (input.is_string()) {
      std::vector<std::string> characters = SplitCodePoints(input.as_string());
      std::string out;
      for (auto it = characters.rbegin(); it != characters.rend(); ++it) out += *it;
      return Value(std::move(out));
    }
    std::vector<Value> items = input.Iterate();
    std::reverse(items.begin(), items.end());
    return Value::List(std::move(items));
  }
  if (name == "select" || name == "reject")
    return FilterItems(input, args, false, name == "select");
  if (name == "selectattr" || name == "rejectattr") {
    return FilterItems(input, args, true, name == "selectattr");
  }
  if (name == "map") return MapItems(input, args);
  if (name == "attr") return GetAttribute(input, First(args, "attr").Str());
  if (name == "int") {
    if (input.is_int()) return input;
    if (input.is_bool()) return Value(static_cast<int64_t>(input.as_bool()));
    if (input.is_float()) return Value(static_cast<int64_t>(input.as_float()));
    try {
      size_t used = 0;
      const std::string text =
          GetAttribute(Value(input.Str()), "strip").as_callable().call({}).Str();
      const int64_t parsed = std::stoll(text, &used);
      if (used == text.size()) return Value(parsed);
      return Value(static_cast<int64_t>(std::stod(text)));
    } catch (const std::exception&) {
      const Value* fallback = args.Get("default", 0);
      return fallback == nullptr ? Value(0) : *fallback;
    }
  }
  if (name == "float") {
    if (input.is_number() || input.is_bool()) return Value(input.as_number());
    try {
      return Value(std::stod(input.Str()));
    } catch (const std::exception&) {
      const Value* fallback = args.Get("default", 0);
      return fallback == nullptr ? Value(0.0) : *fallback;
    }
  }
  if (name == "abs") {
    if (input.is_int()) return Value(input.as_int() < 0 ? -input.as_int() : input.as_int());
    return Value(std::fabs(input.as_number()));
  }
  if (name == "round") {
    const int64_t precision = args.Get("precision", 0) ? args.Get("precision", 0)->as_int() : 0;
    const double scale = std::pow(10.0, static_cast<double>(precision));
    return Value(std::round(input.as_number() * scale) / scale);
  }
  if (name == "indent") return Indent(input.Str(), args);
  if (name == "unique") {
    std::vector<Value> out;
    for (const Value& item : input.Iterate()) {
      if (std::none_of(out.begin(), out.end(), [&](const Value& v) { return v.Equals(item); })) {
        out.push_back(item);
      }
    }
    return Value::List(std::move(out));
  }
  if (name == "sum") {
    Value total(static_cast<int64_t>(0));
    for (const Value& item : input.Iterate()) {
      total = total.is_int() && item.is_int() ? Value(total.as_int() + item.as_int())
                                              : Value(total.as_number() + item.as_number());
    }
    return total;
  }
  if (name == "wordcount") {
    return Value(static_cast<int64_t>(
        GetAttribute(Value(input.Str()), "split").as_callable().call({}).as_list().items.size()));
  }
  Raise("no filter named '" + name + "'");
}

}  // namespace slotserve::server::jinja
