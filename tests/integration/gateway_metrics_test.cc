// The metrics other software reads by name, through a real server's /metrics: vLLM's names that
// the Kubernetes inference gateway's endpoint picker scrapes (server/gateway_metrics.h), checked
// against the requests the clients have running and waiting; slotserve_state_slots_capacity and
// its deprecated old name; and `promtool check metrics` over the whole exposition.
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

constexpr char kPromtool[] = "/usr/bin/promtool";

class GatewayMetricsTest : public ServerTest {
 protected:
  // Scraped where the gateway scrapes: the HTTP API's port (an InferencePool's target port).
  std::string GatewayScrape() { return HttpGet(server_->http_port(), "/metrics"); }
  std::optional<double> Vllm(const std::string& scrape, const std::string& name) {
    return MetricValue(scrape, absl::StrCat("vllm:", name, "{model_name=\"tiny-abc\"}"));
  }
  // True once the three gauges say `running`, `waiting` and running / slots.
  bool GaugesSay(int running, int waiting, int slots) {
    const std::string scrape = GatewayScrape();
    return Vllm(scrape, "num_requests_running") == running &&
           Vllm(scrape, "num_requests_waiting") == waiting &&
           Vllm(scrape, "kv_cache_usage_perc") == static_cast<double>(running) / slots &&
           Vllm(scrape, "gpu_cache_usage_perc") == static_cast<double>(running) / slots;
  }
};

TEST_F(GatewayMetricsTest, VllmGaugesFollowTheRequestsRunningAndWaiting) {
  constexpr int kSlots = 2;
  ASSERT_NO_FATAL_FAILURE(StartServer(
      {absl::StrCat("--max-slots=", kSlots), "--max-queued=4", "--http-listen=127.0.0.1:0"}));
  EXPECT_TRUE(WaitFor([&] { return GaugesSay(0, 0, kSlots); }, absl::Seconds(10)))
      << GatewayScrape();
  const uint32_t tokens = TokensLasting(*stub_, absl::Seconds(30));
  std::vector<std::unique_ptr<BackgroundStream>> streams;
  streams.push_back(
      std::make_unique<BackgroundStream>(channel_, GreedyTextRequest("In the beginning", tokens)));
  ASSERT_TRUE(WaitFor([&] { return streams[0]->messages_received() > 0; }, absl::Seconds(20)));
  EXPECT_TRUE(WaitFor([&] { return GaugesSay(1, 0, kSlots); }, absl::Seconds(10)))
      << GatewayScrape();
  for (const char* prompt : {"And God said", "Let there be light"}) {
    streams.push_back(
        std::make_unique<BackgroundStream>(channel_, GreedyTextRequest(prompt, tokens)));
  }
  // What the clients see: two streams have slots, the third waits.
  ASSERT_TRUE(WaitFor(
      [&] {
        const v1::ModelInfo info = GetModelInfo(*stub_);
        return info.requests_running() == 2 && info.requests_queued() == 1;
      },
      absl::Seconds(20)));
  EXPECT_TRUE(WaitFor([&] { return GaugesSay(2, 1, kSlots); }, absl::Seconds(10)))
      << GatewayScrape();
  // The metrics port shows the same names.
  EXPECT_EQ(Vllm(Scrape(), "num_requests_waiting"), 1.0);
  for (auto& stream : streams) stream->Cancel();
  EXPECT_TRUE(WaitFor([&] { return GaugesSay(0, 0, kSlots); }, absl::Seconds(20)))
      << GatewayScrape();
}

TEST_F(GatewayMetricsTest, CacheConfigAndLoraInfoDescribeThisServer) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--max-slots=4", "--prefix-block=32",
                                       "--prefix-cache-memory=1MiB", "--http-listen=127.0.0.1:0"}));
  const int64_t state_bytes = GetModelInfo(*stub_).state_bytes_per_request();
  ASSERT_GT(state_bytes, 0);
  const std::string scrape = GatewayScrape();
  std::string cache_config;
  for (absl::string_view line : absl::StrSplit(scrape, '\n')) {
    if (absl::StartsWith(line, "vllm:cache_config_info{")) cache_config = std::string(line);
  }
  EXPECT_TRUE(absl::StrContains(cache_config, "block_size=\"32\"")) << cache_config;
  EXPECT_TRUE(absl::StrContains(
      cache_config, absl::StrCat("num_gpu_blocks=\"", (int64_t{1} << 20) / state_bytes, "\"")))
      << cache_config << " (state bytes " << state_bytes << ")";
  EXPECT_TRUE(absl::EndsWith(cache_config, " 1")) << cache_config;
  EXPECT_TRUE(absl::StrContains(scrape, "# TYPE vllm:lora_requests_info gauge")) << scrape;
  EXPECT_TRUE(absl::StrContains(scrape, "max_lora=\"0\"")) << scrape;
  EXPECT_TRUE(absl::StrContains(scrape, "running_lora_adapters=\"\"")) << scrape;
}

TEST_F(GatewayMetricsTest, SlotCapacityHasAGaugesNameAndTheOldNameStaysForOneRelease) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--max-slots=8"}));
  const std::string scrape = Scrape();
  EXPECT_TRUE(absl::StrContains(scrape, "# TYPE slotserve_state_slots_capacity gauge")) << scrape;
  EXPECT_EQ(MetricValue(scrape, "slotserve_state_slots_capacity"), 8.0);
  EXPECT_EQ(MetricValue(scrape, "slotserve_state_slots_total"), 8.0);
  EXPECT_TRUE(absl::StrContains(scrape, "# HELP slotserve_state_slots_total Deprecated")) << scrape;
}

// promtool's lint over a scrape after traffic (histograms filled, outcomes counted). It may
// report only what is so on purpose: the deprecated slotserve_state_slots_total (a gauge named
// like a counter, kept one release), and the colons of vLLM's names, which the gateway reads
// as they are (colons are otherwise for recording rules). Anything else fails the test.
TEST_F(GatewayMetricsTest, PromtoolFindsOnlyTheDocumentedExceptions) {
  ASSERT_EQ(access(kPromtool, X_OK), 0)
      << kPromtool << " is missing: install Debian's prometheus package (CI has it)";
  ASSERT_NO_FATAL_FAILURE(StartServer({"--max-slots=4", "--http-listen=127.0.0.1:0"}));
  for (uint32_t n : {3u, 9u}) {
    ASSERT_TRUE(Generate(*stub_, GreedyTextRequest("In the beginning", n)).status.ok());
  }
  const std::string path = absl::StrCat(::testing::TempDir(), "/scrape-", getpid(), ".prom");
  std::ofstream(path) << GatewayScrape();
  const CommandResult lint = RunCommand(
      {"/bin/sh", "-c", absl::StrCat("exec \"$0\" check metrics < \"$1\""), kPromtool, path});
  std::remove(path.c_str());
  std::vector<std::string> unexpected;
  int problems = 0;
  for (absl::string_view line : absl::StrSplit(lint.out + lint.err, '\n', absl::SkipEmpty())) {
    ++problems;
    const bool deprecated_name = absl::StartsWith(line, "slotserve_state_slots_total ") &&
                                 absl::StrContains(line, "should not have \"_total\" suffix");
    const bool vllm_colon = absl::StartsWith(line, "vllm:") &&
                            absl::StrContains(line, "metric names should not contain ':'");
    if (!deprecated_name && !vllm_colon) unexpected.emplace_back(line);
  }
  EXPECT_TRUE(unexpected.empty()) << absl::StrJoin(unexpected, "\n");
  // The exceptions were seen, so promtool did read the scrape (6 vllm: names and the old one).
  EXPECT_EQ(problems, 7) << lint.out << lint.err;
}

}  // namespace
}  // namespace slotserve::testing
