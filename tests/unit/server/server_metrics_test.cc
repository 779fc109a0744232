// The metrics the engine's observer hooks feed, as a scrape of the HTTP endpoint shows them.
#include "server/server_metrics.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "prometheus/text_serializer.h"
#include "server/http/metrics_route.h"

namespace slotserve::server {
namespace {

std::string Serialize(const ServerMetrics& metrics) {
  return prometheus::TextSerializer().Serialize(metrics.registry()->Collect());
}

bool HasLine(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

class ServerMetricsTest : public ::testing::Test {
 protected:
  ServerMetrics metrics_{BuildInfo{"0.1.0", "tiny", "abc", "cpu"}, /*slots_total=*/16,
                         /*state_bytes_per_request=*/8448};
};

TEST_F(ServerMetricsTest, StartsWithEveryFamilyAndTheStaticValues) {
  const std::string text = Serialize(metrics_);
  EXPECT_TRUE(HasLine(text, "slotserve_state_slots_total 16")) << text;
  EXPECT_TRUE(HasLine(text, "slotserve_state_bytes_per_request 8448")) << text;
  EXPECT_TRUE(HasLine(text,
                      "slotserve_build_info{attention_kind=\"abc\",backend=\"cpu\",model=\"tiny\","
                      "version=\"0.1.0\"} 1"))
      << text;
  EXPECT_TRUE(HasLine(text, "slotserve_requests_total{outcome=\"eos\"} 0")) << text;
  EXPECT_TRUE(HasLine(text, "slotserve_step_duration_seconds_count{phase=\"prefill\"} 0"));
}

TEST_F(ServerMetricsTest, TheStatePartsAreTheWholeStateUntilASeq2seqModelSetsThem) {
  std::string text = Serialize(metrics_);
  EXPECT_TRUE(HasLine(text, "slotserve_state_part_bytes_per_request{part=\"decoder_self\"} 8448"))
      << text;
  EXPECT_TRUE(HasLine(text, "slotserve_state_part_bytes_per_request{part=\"cross_memory\"} 0"))
      << text;
  metrics_.SetStateParts(448, 8000);
  metrics_.OnStep(engine::StepPhase::kEncode, 17, absl::Milliseconds(2));
  text = Serialize(metrics_);
  EXPECT_TRUE(HasLine(text, "slotserve_state_part_bytes_per_request{part=\"decoder_self\"} 448"))
      << text;
  EXPECT_TRUE(HasLine(text, "slotserve_state_part_bytes_per_request{part=\"cross_memory\"} 8000"))
      << text;
  EXPECT_TRUE(HasLine(text, "slotserve_step_duration_seconds_count{phase=\"encode\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "slotserve_step_duration_seconds_count{phase=\"prefill\"} 0")) << text;
}

TEST_F(ServerMetricsTest, ObserverHooksLandInTheirFamilies) {
  engine::Finished finished;
  finished.reason = engine::FinishReason::kEos;
  finished.prompt_tokens = 5;
  finished.generated_tokens = 9;
  finished.timings.total = absl::Milliseconds(30);
  metrics_.OnRequestAdmitted(absl::Milliseconds(2));
  metrics_.OnFirstToken(absl::Milliseconds(3));
  metrics_.OnInterTokenLatency(absl::Microseconds(500));
  metrics_.OnRequestFinished(finished);
  finished.status = absl::CancelledError("client went away");
  metrics_.OnRequestFinished(finished);
  // The second choice of an n = 2 request: its tokens and outcome count, its shared prompt not.
  finished.status = absl::OkStatus();
  finished.choice_index = 1;
  finished.generated_tokens = 4;
  metrics_.OnRequestFinished(finished);
  metrics_.OnStep(engine::StepPhase::kDecode, 12, absl::Microseconds(800));
  metrics_.OnStep(engine::StepPhase::kPrefill, 256, absl::Milliseconds(4));
  metrics_.OnStats({/*running=*/3, /*queued=*/2, /*slots_used=*/3, /*slots_total=*/16});
  metrics_.OnRequestRefused(absl::StatusCode::kResourceExhausted);

  const std::string text = Serialize(metrics_);
  EXPECT_TRUE(HasLine(text, "slotserve_requests_total{outcome=\"eos\"} 2")) << text;
  EXPECT_TRUE(HasLine(text, "slotserve_requests_total{outcome=\"cancelled\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "slotserve_requests_total{outcome=\"resource_exhausted\"} 1"));
  EXPECT_TRUE(HasLine(text, "slotserve_prompt_tokens_total 10"));
  EXPECT_TRUE(HasLine(text, "slotserve_generated_tokens_total 22"));
  EXPECT_TRUE(HasLine(text, "slotserve_queue_time_seconds_count 1"));
  EXPECT_TRUE(HasLine(text, "slotserve_time_to_first_token_seconds_count 1"));
  EXPECT_TRUE(HasLine(text, "slotserve_inter_token_latency_seconds_count 1"));
  EXPECT_TRUE(HasLine(text, "slotserve_request_duration_seconds_count 3"));
  // Only decode steps are batches.
  EXPECT_TRUE(HasLine(text, "slotserve_batch_size_count 1"));
  EXPECT_TRUE(HasLine(text, "slotserve_batch_size_sum 12"));
  EXPECT_TRUE(HasLine(text, "slotserve_step_duration_seconds_count{phase=\"decode\"} 1"));
  EXPECT_TRUE(HasLine(text, "slotserve_step_duration_seconds_count{phase=\"prefill\"} 1"));
  EXPECT_TRUE(HasLine(text, "slotserve_requests_running 3"));
  EXPECT_TRUE(HasLine(text, "slotserve_requests_queued 2"));
  EXPECT_TRUE(HasLine(text, "slotserve_state_slots_used 3"));
}

TEST_F(ServerMetricsTest, EndpointServesTheScrapeOverHttp) {
  absl::StatusOr<std::unique_ptr<http::HttpListener>> endpoint =
      http::StartMetricsListener("127.0.0.1:0", metrics_.registry());
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  const int port = (*endpoint)->port();
  ASSERT_GT(port, 0);
  httplib::Client client("127.0.0.1", port);
  const httplib::Result ok = client.Get("/metrics");
  ASSERT_TRUE(ok) << httplib::to_string(ok.error());
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->get_header_value("Content-Type").rfind("text/plain; version=0.0.4", 0), 0u);
  EXPECT_NE(ok->body.find("\nslotserve_state_slots_total 16\n"), std::string::npos) << ok->body;
  const httplib::Result missing = client.Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  const httplib::Result post = client.Post("/metrics", "", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 404);  // GET only
}

TEST_F(ServerMetricsTest, EndpointRefusesABusyOrMalformedAddress) {
  absl::StatusOr<std::unique_ptr<http::HttpListener>> first =
      http::StartMetricsListener("127.0.0.1:0", metrics_.registry());
  ASSERT_TRUE(first.ok());
  const std::string taken = absl::StrCat("127.0.0.1:", (*first)->port());
  absl::StatusOr<std::unique_ptr<http::HttpListener>> second =
      http::StartMetricsListener(taken, metrics_.registry());
  EXPECT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("--metrics-listen=" + taken), std::string::npos)
      << second.status();
  EXPECT_FALSE(http::StartMetricsListener("no-port-here", metrics_.registry()).ok());
}

}  // namespace
}  // namespace slotserve::server
