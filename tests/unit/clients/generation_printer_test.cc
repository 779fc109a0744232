// slotserve-cli's output rule: stdout holds exactly the generated text; the summary (or an
// error) goes to stderr on a line of its own, after a newline only when the text needs one.
#include "clients/cli/generation_printer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace slotserve::clients {
namespace {

// Everything written to a FILE*.
class Capture {
 public:
  Capture() : file_(std::tmpfile()) {}
  ~Capture() { std::fclose(file_); }
  std::FILE* file() { return file_; }
  std::string contents() {
    std::fflush(file_);
    std::rewind(file_);
    std::string text;
    char buffer[256];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), file_)) > 0) text.append(buffer, n);
    return text;
  }

 private:
  std::FILE* file_;
};

TEST(GenerationPrinterTest, SummaryStartsALineOfItsOwnWhenTheTextDidNotEndOne) {
  Capture out, err;
  GenerationPrinter printer(out.file(), err.file());
  printer.Text(" of the");
  printer.Text("");
  printer.Text(" LORD");
  printer.StderrLine("[length after 3 tokens]");
  EXPECT_EQ(out.contents(), " of the LORD");  // exactly the text: nothing added
  EXPECT_EQ(err.contents(), "\n[length after 3 tokens]\n");
}

TEST(GenerationPrinterTest, NoExtraNewlineAfterTextEndingWithOneOrNoText) {
  Capture out, err;
  GenerationPrinter printer(out.file(), err.file());
  printer.Text("And God said\n");
  printer.StderrLine("[eos after 4 tokens]");
  printer.StderrLine("second");
  EXPECT_EQ(out.contents(), "And God said\n");
  EXPECT_EQ(err.contents(), "[eos after 4 tokens]\nsecond\n");

  Capture out2, err2;
  GenerationPrinter silent(out2.file(), err2.file());
  silent.StderrLine("slotserve-cli: refused");
  EXPECT_EQ(out2.contents(), "");
  EXPECT_EQ(err2.contents(), "slotserve-cli: refused\n");
}

}  // namespace
}  // namespace slotserve::clients
