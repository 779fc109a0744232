// How slotserve-cli shows a generation to a person: the text on stdout exactly as generated
// (so `> file` or a pipe gets nothing else), and whatever follows on stderr (the closing
// summary, or why the call failed) on a line of its own. Both streams usually share a
// terminal, so a stderr line after text that did not end with a newline starts with one;
// otherwise it would be glued to the last generated character.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace slotserve::clients {

class GenerationPrinter {
 public:
  GenerationPrinter(std::FILE* out, std::FILE* err) : out_(out), err_(err) {}

  // Writes `text` to stdout and flushes it (tokens show as they arrive).
  void Text(std::string_view text);
  // Writes `line` (no newline of its own) to stderr on a line of its own.
  void StderrLine(std::string_view line);

 private:
  std::FILE* out_;
  std::FILE* err_;
  bool at_line_start_ = true;  // the text so far is empty or ends with '\n'
};

}  // namespace slotserve::clients
