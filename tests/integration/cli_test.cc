// slotserve-cli against a real server: streams a completion, reports health and info, and
// exits non-zero with a clear message when the server is down or refuses.
#include <gtest/gtest.h>
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
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

TEST_F(CliTest, SeveralChoicesArePrintedWholeUnderTheirIndex) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::vector<std::string> options = {"--temperature=1", "--ignore-eos", "--max-new-tokens=8",
                                            "--quiet"};
  std::vector<std::string> forked = {"generate", "--n=2", "--seed=30"};
  forked.insert(forked.end(), options.begin(), options.end());
  forked.push_back("In the beginning");
  const CommandResult cli = Cli(forked);
  ASSERT_EQ(cli.exit_status, 0) << cli.err;
  // Choice i equals the single request with seed 30 + i; they follow one another on stdout.
  std::string expected;
  for (const char* seed : {"--seed=30", "--seed=31"}) {
    std::vector<std::string> alone = {"complete", seed};
    alone.insert(alone.end(), options.begin(), options.end());
    alone.push_back("In the beginning");
    const CommandResult single = Cli(alone);
    ASSERT_EQ(single.exit_status, 0) << single.err;
    expected += single.out;
  }
  EXPECT_EQ(cli.out, expected);
  EXPECT_TRUE(absl::StrContains(cli.err, "[choice 0]")) << cli.err;
  EXPECT_TRUE(absl::StrContains(cli.err, "[choice 1]")) << cli.err;
}

TEST_F(CliTest, BeamSearchPrintsTheNBestWithTheirScores) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  v1::GenerateRequest request;
  request.set_text("In the beginning");
  request.mutable_stopping()->set_max_new_tokens(6);
  request.mutable_beam()->set_width(3);
  request.mutable_beam()->set_n_best(2);
  request.mutable_beam()->set_length_penalty(1.0f);
  const StreamResult expected = Generate(*stub_, request);
  ASSERT_TRUE(expected.status.ok()) << expected.status.error_message();
  ASSERT_EQ(expected.finished->hypotheses_size(), 2);
  for (const char* command : {"generate", "complete"}) {
    const CommandResult cli = Cli({command, "--beam=3", "--n-best=2", "--length-penalty=1",
                                   "--max-new-tokens=6", "In the beginning"});
    ASSERT_EQ(cli.exit_status, 0) << command << ": " << cli.err;
    // Each hypothesis's text on stdout, in order, after its score line on stderr.
    EXPECT_EQ(cli.out,
              expected.finished->hypotheses(0).text() + expected.finished->hypotheses(1).text())
        << command;
    for (int i = 0; i < 2; ++i) {
      const v1::Hypothesis& h = expected.finished->hypotheses(i);
      const std::string line = absl::StrFormat("[hypothesis %d: score %.6f, logprob sum %.6f, ", i,
                                               h.score(), h.logprob_sum());
      EXPECT_TRUE(absl::StrContains(cli.err, line)) << command << ": " << line << " in " << cli.err;
    }
  }
  const CommandResult sampled =
      Cli({"generate", "--beam=3", "--temperature=0.8", "--max-new-tokens=4", "In the beginning"});
  EXPECT_EQ(sampled.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(sampled.err, "sampling.temperature must be 0 or unset"))
      << sampled.err;
  const CommandResult no_beam = Cli({"generate", "--n-best=2", "In the beginning"});
  EXPECT_EQ(no_beam.exit_status, 2);
  EXPECT_TRUE(absl::StrContains(no_beam.err, "--n-best and --length-penalty need --beam"))
      << no_beam.err;
}

TEST_F(CliTest, SessionsAreKeptContinuedAndMovedAsBytes) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const CommandResult first = Cli({"complete", "--temperature=0", "--ignore-eos",
                                   "--max-new-tokens=5", "--keep-session", "In the beginning"});
  ASSERT_EQ(first.exit_status, 0) << first.err;
  const size_t at = first.err.find(", session ");
  ASSERT_NE(at, std::string::npos) << first.err;
  const std::string handle = first.err.substr(at + 10, first.err.find(']', at) - (at + 10));
  ASSERT_FALSE(handle.empty()) << first.err;

  const std::string state_file = ::testing::TempDir() + "/cli_session_state.bin";
  const CommandResult exported =
      RunCommand({"/bin/sh", "-c", "\"$0\" --server=\"$1\" export-session \"$2\" > \"$3\"",
                  CliBinary(), server_->address(), handle, state_file});
  ASSERT_EQ(exported.exit_status, 0) << exported.err;
  EXPECT_TRUE(absl::StrContains(exported.err, "bytes]")) << exported.err;
  const CommandResult imported = Cli({"import-session", state_file});
  ASSERT_EQ(imported.exit_status, 0) << imported.err;
  const std::string copy = std::string(absl::StripTrailingAsciiWhitespace(imported.out));
  ASSERT_FALSE(copy.empty());
  EXPECT_NE(copy, handle);

  // The kept session and its imported copy continue alike.
  const std::vector<std::string> turn = {"complete", "--temperature=0", "--ignore-eos",
                                         "--max-new-tokens=6", "--quiet"};
  std::vector<std::string> here = turn, there = turn;
  here.insert(here.end(), {"--session=" + handle, " and"});
  there.insert(there.end(), {"--session=" + copy, " and"});
  const CommandResult a = Cli(here), b = Cli(there);
  ASSERT_EQ(a.exit_status, 0) << a.err;
  ASSERT_EQ(b.exit_status, 0) << b.err;
  EXPECT_EQ(a.out, b.out);

  const CommandResult unknown = Cli({"export-session", "no-such-session"});
  EXPECT_EQ(unknown.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(unknown.err, "no-such-session")) << unknown.err;
  const CommandResult missing = Cli({"import-session", "/nonexistent/state.bin"});
  EXPECT_EQ(missing.exit_status, 2);
  EXPECT_TRUE(absl::StrContains(missing.err, "/nonexistent/state.bin")) << missing.err;
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

// --help is a request, not an error: exit 0, the usage and each flag of the binary with its
// help, and no source file names (absl's own listing headed them with the build machine's
// absolute paths, and exited 1 — issue 57). Both binaries behave alike.
TEST(HelpTest, CliAndServerHelpExitZeroAndNameNoSourceFiles) {
  struct Binary {
    std::string path;
    std::vector<std::string> flags;  // a few the listing must contain
  };
  for (const Binary& binary :
       {Binary{CliBinary(), {"--server ", "--max-new-tokens ", "--temperature "}},
        Binary{ServerBinary(),
               {"--model ", "--http-listen ", "--max-slots ", "--allowed-origins "}}}) {
    for (const char* spelling : {"--help", "-help", "--helpfull"}) {
      SCOPED_TRACE(binary.path + " " + spelling);
      const CommandResult help = RunCommand({binary.path, spelling});
      EXPECT_EQ(help.exit_status, 0) << help.err;
      for (const std::string& flag : binary.flags) {
        EXPECT_TRUE(absl::StrContains(help.out, flag)) << flag << " missing from:\n" << help.out;
      }
      EXPECT_FALSE(absl::StrContains(help.out, "Flags from")) << help.out;
      EXPECT_FALSE(absl::StrContains(help.out, ".cc")) << help.out;
      EXPECT_FALSE(absl::StrContains(help.out, "/clients/")) << help.out;
    }
  }
}

}  // namespace
}  // namespace slotserve::testing
