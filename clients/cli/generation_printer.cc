#include "clients/cli/generation_printer.h"

namespace slotserve::clients {

void GenerationPrinter::Text(std::string_view text) {
  if (text.empty()) return;
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fflush(out_);
  at_line_start_ = text.back() == '\n';
}

void GenerationPrinter::StderrLine(std::string_view line) {
  std::string whole;
  if (!at_line_start_) whole += '\n';
  whole.append(line);
  whole += '\n';
  std::fwrite(whole.data(), 1, whole.size(), err_);
  std::fflush(err_);
  at_line_start_ = true;
}

}  // namespace slotserve::clients
