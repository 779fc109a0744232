// Start-up flags that size the server: the state pool derived from --state-memory
// (docs/ARCHITECTURE.md "A request's path"), capped by --max-slots, and a budget too small for one
// request refused before serving; the deprecated --device-sampling accepted with one warning and no
// effect; a --served-model-name a client could not send back refused.
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include "absl/strings/match.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

class StartupFlagsTest : public ServerTest {};

constexpr int64_t kMiB = 1 << 20;

TEST_F(StartupFlagsTest, StateMemoryBudgetSizesThePool) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--state-memory=3MiB"}));
  const v1::ModelInfo info = GetModelInfo(*stub_);
  ASSERT_GT(info.state_bytes_per_request(), 0);
  // Every arena keeps one state for the padding rows of a decode batch.
  const int64_t expected_slots = 3 * kMiB / info.state_bytes_per_request() - 1;
  ASSERT_GT(expected_slots, 1) << "the tiny model's state is too large for this test's budget";
  EXPECT_EQ(info.slots_total(), expected_slots);
  EXPECT_EQ(info.slots_free(), expected_slots);
  EXPECT_TRUE(absl::StrContains(server_->log(), "from --state-memory=3 MiB")) << server_->log();
  EXPECT_TRUE(
      absl::StrContains(Scrape(), "slotserve_state_slots_total " + std::to_string(expected_slots)));
}

TEST_F(StartupFlagsTest, MaxSlotsCapsTheBudget) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--state-memory=3MiB", "--max-slots=3"}));
  EXPECT_EQ(GetModelInfo(*stub_).slots_total(), 3);
}

TEST_F(StartupFlagsTest, WithoutABudgetMaxSlotsAlone) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--max-slots=5"}));
  EXPECT_EQ(GetModelInfo(*stub_).slots_total(), 5);
}

TEST_F(StartupFlagsTest, RequestStateLimitsAreReportedAsGiven) {
  ASSERT_NO_FATAL_FAILURE(
      StartServer({"--max-slots=6", "--max-n=4", "--prefix-block=32", "--prefix-cache-memory=8MiB",
                   "--session-memory=16MiB", "--session-ttl=90s"}));
  const v1::ModelInfo info = GetModelInfo(*stub_);
  EXPECT_EQ(info.max_n(), 4u);
  EXPECT_EQ(info.prefix_block(), 32u);
  EXPECT_EQ(info.prefix_cache_bytes_limit(), 8 * kMiB);
  EXPECT_EQ(info.session_memory_bytes_limit(), 16 * kMiB);
  EXPECT_DOUBLE_EQ(info.session_ttl_seconds(), 90.0);
}

TEST_F(StartupFlagsTest, MaxNIsCappedByTheSlots) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--max-slots=3", "--max-n=16"}));
  EXPECT_EQ(GetModelInfo(*stub_).max_n(), 3u);
}

// Runs the server with one extra flag, which must stop it before it serves; its output.
std::string RefusedStartupOutput(const std::string& flag) {
  const CommandResult result =
      RunCommand({ServerBinary(), "--model=" + TinyModelDir(), "--listen=127.0.0.1:0",
                  "--metrics-listen=127.0.0.1:0", flag});
  EXPECT_NE(result.exit_status, 0) << flag;
  return result.out + result.err;
}

TEST_F(StartupFlagsTest, ABudgetBelowTwoStatesIsRefusedWithTheSizeNeeded) {
  const std::string output = RefusedStartupOutput("--state-memory=1KiB");
  EXPECT_TRUE(absl::StrContains(output, "--state-memory=1 KiB holds 0 request state(s)")) << output;
  EXPECT_TRUE(absl::StrContains(output, "give at least")) << output;
}

TEST_F(StartupFlagsTest, AMalformedBudgetIsRefusedNamingTheFlag) {
  const std::string output = RefusedStartupOutput("--state-memory=lots");
  EXPECT_TRUE(absl::StrContains(output, "--state-memory: expected a byte size")) << output;
}

constexpr char kDeviceSamplingWarning[] =
    "warning: --device-sampling is deprecated and has no effect";

// Counts the non-overlapping occurrences of `needle` in `text`.
size_t Occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

TEST_F(StartupFlagsTest, AnAllowedOriginWithAPathIsRefusedQuotingIt) {
  const std::string output = RefusedStartupOutput("--allowed-origins=https://app.example.com/ui");
  EXPECT_TRUE(absl::StrContains(output,
                                "--allowed-origins: \"https://app.example.com/ui\" is not "
                                "an origin"))
      << output;
}

TEST_F(StartupFlagsTest, TheDeprecatedDeviceSamplingFlagWarnsOnceAndServesTheSameTokens) {
  ASSERT_NO_FATAL_FAILURE(StartServer({}));
  EXPECT_FALSE(absl::StrContains(server_->log(), kDeviceSamplingWarning)) << server_->log();
  const StreamResult without = Generate(*stub_, GreedyTextRequest("in the beginning", 12));
  ASSERT_TRUE(without.status.ok()) << without.status.error_message();
  // Any value, the former modes and others alike: the flag is read by nothing.
  for (const char* flag : {"--device-sampling=off", "--device-sampling=maybe"}) {
    ASSERT_NO_FATAL_FAILURE(StartServer({flag}));
    EXPECT_EQ(Occurrences(server_->log(), kDeviceSamplingWarning), 1u) << server_->log();
    const StreamResult with = Generate(*stub_, GreedyTextRequest("in the beginning", 12));
    ASSERT_TRUE(with.status.ok()) << with.status.error_message();
    EXPECT_EQ(with.ids, without.ids) << flag;
  }
}

TEST_F(StartupFlagsTest, AServedModelNameWithSpacesIsRefusedQuotingIt) {
  const std::string output = RefusedStartupOutput("--served-model-name=my model");
  EXPECT_TRUE(absl::StrContains(output,
                                "--served-model-name must be at most 256 printable ASCII "
                                "characters without spaces, got \"my model\""))
      << output;
  const std::string long_name(257, 'a');
  EXPECT_TRUE(absl::StrContains(RefusedStartupOutput("--served-model-name=" + long_name),
                                "got \"" + long_name + "\""));
}

TEST_F(StartupFlagsTest, MaxStepLatencyIsAutoByDefaultAndTakesADuration) {
  ASSERT_NO_FATAL_FAILURE(StartServer({}));
  EXPECT_TRUE(
      absl::StrContains(server_->log(), "max step latency auto (3x the median decode step)"))
      << server_->log();
}

TEST_F(StartupFlagsTest, ATightMaxStepLatencyStillServesALongPromptBesideAStream) {
  // Without prefix blocks the cap cuts chunks to a few tokens per step; both requests finish.
  ASSERT_NO_FATAL_FAILURE(StartServer({"--max-step-latency=100us", "--prefix-cache-memory=0"}));
  EXPECT_TRUE(absl::StrContains(server_->log(), "max step latency 100us")) << server_->log();
  StreamResult decoding;
  std::thread stream([&] { decoding = Generate(*stub_, GreedyTextRequest("and god said", 200)); });
  std::string long_prompt;
  for (int i = 0; i < 60; ++i) long_prompt += "in the beginning god created the heaven ";
  const StreamResult prompted = Generate(*stub_, GreedyTextRequest(long_prompt, 8));
  stream.join();
  ASSERT_TRUE(prompted.status.ok()) << prompted.status.error_message();
  EXPECT_EQ(prompted.ids.size(), 8u);
  ASSERT_TRUE(decoding.status.ok()) << decoding.status.error_message();
  EXPECT_EQ(decoding.ids.size(), 200u);
}

TEST_F(StartupFlagsTest, ABadMaxStepLatencyIsRefusedNamingTheFlag) {
  const std::string output = RefusedStartupOutput("--max-step-latency=soon");
  EXPECT_TRUE(absl::StrContains(output, "--max-step-latency must be auto, off or a positive"))
      << output;
}

}  // namespace
}  // namespace slotserve::testing
