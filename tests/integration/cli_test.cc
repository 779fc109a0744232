// slotserve-cli against a real server: streams a completion, reports health and info, and
// exits non-zero with a clear message when the server is down or refuses.
#include <gtest/gtest.h>
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

class CliTest : public ServerTest {
 protected:
  CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {CliBinary(), "--server=" + server_->address()});
    return RunCommand(args);
  }
};

TEST_F(CliTest, GenerateStreamsTheSameTextAsComplete) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const CommandResult cli = Cli(
      {"generate", "--temperature=0", "--ignore-eos", "--max-new-tokens=20", "In the beginning"});
  ASSERT_EQ(cli.exit_status, 0) << cli.err;
  grpc::ClientContext context;
  v1::CompleteResponse whole;
  ASSERT_TRUE(stub_->Complete(&context, GreedyTextRequest("In the beginning", 20), &whole).ok());
  // stdout is exactly the text; the summary is a line of its own on stderr, after a newline
  // when the text did not end with one (a terminal shows both streams together).
  EXPECT_EQ(cli.out, whole.text());
  const bool text_ends_a_line = !whole.text().empty() && whole.text().back() == '\n';
  EXPECT_TRUE(absl::StartsWith(
      cli.err, text_ends_a_line ? "[length after 20 tokens" : "\n[length after 20 tokens"))
      << cli.err;
  EXPECT_TRUE(absl::EndsWith(cli.err, "]\n")) << cli.err;
  // complete follows the same rule.
  const CommandResult complete = Cli(
      {"complete", "--temperature=0", "--ignore-eos", "--max-new-tokens=20", "In the beginning"});
  ASSERT_EQ(complete.exit_status, 0) << complete.err;
  EXPECT_EQ(complete.out, whole.text());
  EXPECT_EQ(complete.err.substr(0, 2), cli.err.substr(0, 2));
}

TEST_F(CliTest, JsonModePrintsOneObjectPerMessage) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const CommandResult cli =
      Cli({"--json", "generate", "--max-new-tokens=6", "--seed=3", "And God said"});
  ASSERT_EQ(cli.exit_status, 0) << cli.err;
  std::vector<std::string> lines = absl::StrSplit(cli.out, '\n', absl::SkipEmpty());
  ASSERT_GE(lines.size(), 2u);
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    EXPECT_TRUE(absl::StartsWith(lines[i], "{\"tokens\":")) << lines[i];
  }
  EXPECT_TRUE(absl::StartsWith(lines.back(), "{\"finished\":")) << lines.back();
  // Pure JSON lines: no blank line, no summary.
  EXPECT_EQ(cli.out.find("\n\n"), std::string::npos) << cli.out;
  EXPECT_TRUE(absl::EndsWith(cli.out, "}\n")) << cli.out;
  EXPECT_EQ(cli.err, "");
  EXPECT_TRUE(absl::StrContains(lines.back(), "\"seed\":\"3\"")) << lines.back();
}

TEST_F(CliTest, PromptFromStdinHealthAndInfo) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const CommandResult health = Cli({"health"});
  EXPECT_EQ(health.exit_status, 0) << health.err;
  EXPECT_EQ(health.out, "SERVING\n");
  const CommandResult info = Cli({"info"});
  EXPECT_EQ(info.exit_status, 0) << info.err;
  EXPECT_TRUE(absl::StrContains(info.out, "tiny-abc")) << info.out;
  EXPECT_TRUE(absl::StrContains(info.out, "abc (8 slots)")) << info.out;
  const CommandResult from_stdin = RunCommand(
      {"/bin/sh", "-c",
       "echo 'In the beginning' | \"$0\" --server=\"$1\" --quiet generate --max-new-tokens=4 -",
       CliBinary(), server_->address()});
  EXPECT_EQ(from_stdin.exit_status, 0) << from_stdin.err;
}

TEST_F(CliTest, RefusalExitsNonZeroNamingTheField) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const CommandResult cli = Cli({"generate", "--temperature=-1", "x"});
  EXPECT_EQ(cli.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(cli.err, "refused the request")) << cli.err;
  EXPECT_TRUE(absl::StrContains(cli.err, "sampling.temperature")) << cli.err;
}

TEST_F(CliTest, ExitsNonZeroWithAClearMessageWhenTheServerIsDown) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  server_->Terminate();
  ASSERT_EQ(server_->WaitForExit(absl::Seconds(30)), 0);
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"generate", "hello"}, {"health"}, {"info"}}) {
    const CommandResult cli = Cli(args);
    EXPECT_EQ(cli.exit_status, 1) << args[0];
    EXPECT_TRUE(absl::StrContains(cli.err, "cannot reach the server at " + server_->address()))
        << args[0] << ": " << cli.err;
  }
}

}  // namespace
}  // namespace slotserve::testing
