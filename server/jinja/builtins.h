// What the evaluator looks up by name: filters (filters.cc), tests (tests.cc), attribute and item
// access with the str/dict/list methods templates call (methods.cc), and Python's json.dumps as
// transformers' tojson filter calls it (json_dump.cc). Each raises TemplateError on misuse.
#pragma once

#include <string>
#include <string_view>

#include "server/jinja/value.h"

namespace slotserve::server::jinja {

Value ApplyFilter(const std::string& name, const Value& input, const CallArguments& arguments);
bool ApplyTest(const std::string& name, const Value& input, const CallArguments& arguments);
// Whether a filter or test of that name exists: the parser refuses others, as jinja2 does when
// it compiles a template.
bool IsFilter(std::string_view name);
bool IsTest(std::string_view name);

// obj.name: a method of a str, dict or list (bound to it), else a dict's item, else undefined.
Value GetAttribute(const Value& object, const std::string& name);
// obj[key]: a dict's item, a list's or str's element (negative counts from the end), else an
// attribute as GetAttribute finds it, else undefined.
Value GetItem(const Value& object, const Value& key);
// obj[start:stop:step] on a list or str, with Python's rules for omitted and negative bounds.
Value Slice(const Value& object, const Value& start, const Value& stop, const Value& step);
// What using an undefined value raises: its hint ("'x' is undefined", "'dict object' has no
// attribute 'y'").
[[noreturn]] void RaiseUndefined(const Value& undefined);

struct JsonDumpOptions {
  bool ensure_ascii = false;
  int indent = -1;          // -1: None (one line)
  std::string indent_text;  // indent given as a string
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
};
std::string JsonDump(const Value& value, const JsonDumpOptions& options);

}  // namespace slotserve::server::jinja
