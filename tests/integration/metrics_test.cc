// The Prometheus endpoint shows every family of the README's metrics list, with values that match
// what the clients saw.
#include <unistd.h>

#include <gtest/gtest.h>
#include "absl/strings/str_cat.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

const char* const kFamilies[] = {
    "slotserve_requests_total",
    "slotserve_unauthenticated_requests_total",
    "slotserve_prompt_tokens_total",
    "slotserve_generated_tokens_total",
    "slotserve_queue_time_seconds",
    "slotserve_time_to_first_token_seconds",
    "slotserve_inter_token_latency_seconds",
    "slotserve_request_duration_seconds",
    "slotserve_batch_size",
    "slotserve_step_duration_seconds",
    "slotserve_requests_running",
    "slotserve_requests_queued",
    "slotserve_state_slots_used",
    "slotserve_state_slots_total",
    "slotserve_state_bytes_per_request",
    "slotserve_build_info",
};

void ExpectEveryFamily(const std::string& scrape) {
  for (const char* family : kFamilies) {
    EXPECT_NE(scrape.find(absl::StrCat("# TYPE ", family, " ")), std::string::npos)
        << family << " missing from:\n"
        << scrape;
  }
}

class MetricsTest : public ServerTest {
 protected:
  void SetUp() override { StartServer({"--max-slots=8"}); }
};

TEST_F(MetricsTest, ScrapeShowsEveryFamilyWithRealValues) {
  ExpectEveryFamily(Scrape());

  double streamed = 0, prompt = 0;
  for (uint32_t n : {5u, 17u, 33u}) {
    const StreamResult result = Generate(*stub_, GreedyTextRequest("In the beginning", n));
    ASSERT_TRUE(result.status.ok());
    streamed += result.ids.size();
    prompt += result.finished->prompt_tokens();
  }
  const std::string scrape = Scrape();
  ExpectEveryFamily(scrape);
  EXPECT_EQ(MetricValue(scrape, "slotserve_generated_tokens_total"), streamed);
  EXPECT_EQ(MetricValue(scrape, "slotserve_prompt_tokens_total"), prompt);
  EXPECT_EQ(MetricValue(scrape, "slotserve_requests_total{outcome=\"length\"}"), 3.0);
  EXPECT_EQ(MetricValue(scrape, "slotserve_queue_time_seconds_count"), 3.0);
  EXPECT_EQ(MetricValue(scrape, "slotserve_time_to_first_token_seconds_count"), 3.0);
  // Every token after a request's first has an inter-token latency.
  EXPECT_EQ(MetricValue(scrape, "slotserve_inter_token_latency_seconds_count"), streamed - 3);
  EXPECT_GT(
      MetricValue(scrape, "slotserve_step_duration_seconds_count{phase=\"prefill\"}").value_or(0),
      0);
  EXPECT_GT(
      MetricValue(scrape, "slotserve_step_duration_seconds_count{phase=\"decode\"}").value_or(0),
      0);
  EXPECT_EQ(MetricValue(scrape, "slotserve_state_slots_total"), 8.0);
  EXPECT_EQ(MetricValue(scrape, "slotserve_state_slots_used"), 0.0);
  EXPECT_EQ(MetricValue(scrape, "slotserve_requests_running"), 0.0);
  EXPECT_EQ(MetricValue(scrape, "slotserve_state_bytes_per_request"),
            static_cast<double>(GetModelInfo(*stub_).state_bytes_per_request()));
  EXPECT_NE(scrape.find("slotserve_build_info{"), std::string::npos);
}

TEST_F(MetricsTest, CurlOfTheMetricsPortShowsEveryFamily) {
  if (access("/usr/bin/curl", X_OK) != 0) GTEST_SKIP() << "curl is not installed";
  const CommandResult curl =
      RunCommand({"/usr/bin/curl", "-sf",
                  absl::StrCat("http://127.0.0.1:", server_->metrics_port(), "/metrics")});
  ASSERT_EQ(curl.exit_status, 0) << curl.err;
  ExpectEveryFamily(curl.out);
}

}  // namespace
}  // namespace slotserve::testing
