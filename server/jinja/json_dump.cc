// Python's json.dumps, as transformers' tojson filter calls it (ensure_ascii, indent,
// separators, sort_keys): chat templates print tool schemas with it, so the model sees exactly
// the bytes HF's rendering gives it.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "server/jinja/builtins.h"
#include "server/jinja/utf8_text.h"

namespace slotserve::server::jinja {
namespace {

void AppendJsonString(const std::string& text, bool ensure_ascii, std::string& out) {
  out += '"';
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    char escaped[16];
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      default:
        break;
    }
    if (byte < 0x20) {
      std::snprintf(escaped, sizeof escaped, "\\u%04x", byte);
      out += escaped;
    } else if (byte >= 0x80 && ensure_ascii) {
      uint32_t code = DecodeCodePoint(text, i);
      if (code >= 0x10000) {
        code -= 0x10000;
        std::snprintf(escaped, sizeof escaped, "\\u%04x\\u%04x", 0xD800 + (code >> 10),
                      0xDC00 + (code & 0x3FF));
      } else {
        std::snprintf(escaped, sizeof escaped, "\\u%04x", code);
      }
      out += escaped;
    } else {
      out += c;
    }
  }
  out += '"';
}

class JsonWriter {
 public:
  explicit JsonWriter(const JsonDumpOptions& options) : options_(options) {}

  void Write(const Value& value, int depth, std::string& out) {
    if (value.is_none()) {
      out += "null";
    } else if (value.is_bool()) {
      out += value.as_bool() ? "true" : "false";
    } else if (value.is_int()) {
      out += std::to_string(value.as_int());
    } else if (value.is_float()) {
      const double d = value.as_float();
      out += std::isnan(d)   ? "NaN"
             : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity")
                             : PythonFloatRepr(d);
    } else if (value.is_string()) {
      AppendJsonString(value.as_string(), options_.ensure_ascii, out);
    } else if (value.is_list()) {
      const auto& items = value.as_list().items;
      if (items.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < items.size(); ++i) {
        out += i > 0 ? options_.item_separator : "";
        NewLine(depth + 1, out);
        Write(items[i], depth + 1, out);
      }
      NewLine(depth, out);
      out += ']';
    } else if (value.is_dict()) {
      std::vector<const std::pair<std::string, Value>*> entries;
      for (const auto& entry : value.as_dict().entries) entries.push_back(&entry);
      if (entries.empty()) {
        out += "{}";
        return;
      }
      if (options_.sort_keys) {
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto* a, const auto* b) { return a->first < b->first; });
      }
      out += '{';
      for (size_t i = 0; i < entries.size(); ++i) {
        out += i > 0 ? options_.item_separator : "";
        NewLine(depth + 1, out);
        AppendJsonString(entries[i]->first, options_.ensure_ascii, out);
        out += options_.key_separator;
        Write(entries[i]->second, depth + 1, out);
      }
      NewLine(depth, out);
      out += '}';
    } else {
      Raise("Object of type " + std::string(value.is_undefined() ? "Undefined" : "function") +
            " is not JSON serializable");
    }
  }

 private:
  void NewLine(int depth, std::string& out) const {
    if (options_.indent < 0 && options_.indent_text.empty()) return;
    out += '\n';
    for (int i = 0; i < depth; ++i) {
      out +=
          options_.indent_text.empty() ? std::string(options_.indent, ' ') : options_.indent_text;
    }
  }

  const JsonDumpOptions& options_;
};

}  // namespace

std::string JsonDump(const Value& value, const JsonDumpOptions& options) {
  std::string out;
  JsonWriter(options).Write(value, 0, out);
  return out;
}

}  // namespace slotserve::server::jinja
