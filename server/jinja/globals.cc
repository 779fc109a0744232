#include "server/jinja/globals.h"

#include <ctime>

namespace slotserve::server::jinja {
namespace {

Value Range(const CallArguments& args) {
  for (const Value& bound : args.positional) {
    if (!bound.is_int()) Raise("range() takes integers, got " + bound.TypeName());
  }
  int64_t start = 0;
  int64_t stop = 0;
  int64_t step = 1;
  if (args.positional.size() == 1) {
    stop = args.positional[0].as_int();
  } else if (args.positional.size() >= 2) {
    start = args.positional[0].as_int();
    stop = args.positional[1].as_int();
    if (args.positional.size() > 2) step = args.positional[2].as_int();
  } else {
    Raise("range expected at least 1 argument, got 0");
  }
  if (step == 0) Raise("range() arg 3 must not be zero");
  // The sandbox's MAX_RANGE.
  constexpr int64_t kMaxRange = 100000;
  std::vector<Value> items;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (static_cast<int64_t>(items.size()) >= kMaxRange) {
      Raise("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    }
    items.emplace_back(i);
  }
  return Value::List(std::move(items));
}

Value MakeDict(const CallArguments& args, bool is_namespace) {
  Value dict = Value::Dict();
  dict.mutable_dict().is_namespace = is_namespace;
  for (const Value& positional : args.positional) {
    if (!positional.is_dict()) Raise("dict() and namespace() take a mapping or keywords");
    for (const auto& [key, value] : positional.as_dict().entries)
      dict.mutable_dict().Set(key, value);
  }
  for (const auto& [key, value] : args.keyword) dict.mutable_dict().Set(key, value);
  return dict;
}

Value StrftimeNow(const CallArguments& args) {
  if (args.positional.empty() || !args.positional[0].is_string()) {
    Raise("strftime_now() takes a format string");
  }
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[512];
  const size_t written =
      std::strftime(buffer, sizeof buffer, args.positional[0].as_string().c_str(), &local);
  return Value(std::string(buffer, written));
}

}  // namespace

void AddGlobals(Scope& scope, std::shared_ptr<NamespaceList> namespaces) {
  scope.Set("range", Value::Function("range", Range));
  scope.Set("dict", Value::Function(
                        "dict", [](const CallArguments& args) { return MakeDict(args, false); }));
  scope.Set("namespace", Value::Function("namespace", [namespaces](const CallArguments& args) {
              Value made = MakeDict(args, true);
              namespaces->push_back(std::get<std::shared_ptr<DictValue>>(made.data()));
              return made;
            }));
  scope.Set("raise_exception",
            Value::Function("raise_exception", [](const CallArguments& args) -> Value {
              Raise(args.positional.empty() ? "" : args.positional[0].Str());
            }));
  scope.Set("strftime_now", Value::Function("strftime_now", StrftimeNow));
  scope.Set("cycler", Value::Function("cycler", [](const CallArguments& args) {
              auto items = std::make_shared<std::vector<Value>>(args.positional);
              auto position = std::make_shared<size_t>(0);
              Value cycler = Value::Dict();
              cycler.mutable_dict().Set(
                  "next", Value::Function("next", [items, position](const CallArguments&) {
                    if (items->empty()) return Value(nullptr);
                    return (*items)[(*position)++ % items->size()];
                  }));
              return cycler;
            }));
  scope.Set("joiner", Value::Function("joiner", [](const CallArguments& args) {
              const std::string separator =
                  args.positional.empty() ? ", " : args.positional[0].Str();
              auto used = std::make_shared<bool>(false);
              return Value::Function("joiner", [separator, used](const CallArguments&) {
                if (!*used) {
                  *used = true;
                  return Value("");
                }
                return Value(separator);
              });
            }));
}

}  // namespace slotserve::server::jinja
