// The metrics the engine's observer hooks feed, as a scrape of the HTTP endpoint shows them.
#include "server/server_metrics.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "prometheus/text_serializer.h"
#include "server/metrics_endpoint.h"

namespace slotserve::server {
namespace {

std::string Serialize(const ServerMetrics& metrics) {
  return prometheus::TextSerializer().Serialize(metrics.registry()->Collect());
}

bool HasLine(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

// A raw HTTP exchange with the endpoint: the whole response.
std::string HttpExchange(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    char buffer[4096];
    ssize_t n;
    while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) response.append(buffer, n);
  }
  close(fd);
  return response;
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
  metrics_.OnStep(engine::StepPhase::kDecode, 12, absl::Microseconds(800));
  metrics_.OnStep(engine::StepPhase::kPrefill, 256, absl::Milliseconds(4));
  metrics_.OnStats({/*running=*/3, /*queued=*/2, /*slots_used=*/3, /*slots_total=*/16});
  metrics_.OnRequestRefused(absl::StatusCode::kResourceExhausted);

  const std::string text = Serialize(metrics_);
  EXPECT_TRUE(HasLine(text, "slotserve_requests_total{outcome=\"eos\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "slotserve_requests_total{outcome=\"cancelled\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "slotserve_requests_total{outcome=\"resource_exhausted\"} 1"));
  EXPECT_TRUE(HasLine(text, "slotserve_prompt_tokens_total 10"));
  EXPECT_TRUE(HasLine(text, "slotserve_generated_tokens_total 18"));
  EXPECT_TRUE(HasLine(text, "slotserve_queue_time_seconds_count 1"));
  EXPECT_TRUE(HasLine(text, "slotserve_time_to_first_token_seconds_count 1"));
  EXPECT_TRUE(HasLine(text, "slotserve_inter_token_latency_seconds_count 1"));
  EXPECT_TRUE(HasLine(text, "slotserve_request_duration_seconds_count 2"));
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
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
      MetricsEndpoint::Start("127.0.0.1:0", metrics_.registry());
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  const int port = (*endpoint)->port();
  ASSERT_GT(port, 0);
  const std::string ok = HttpExchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_NE(ok.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(ok.find("\nslotserve_state_slots_total 16\n"), std::string::npos) << ok;
  const std::string missing = HttpExchange(port, "GET /nope HTTP/1.1\r\n\r\n");
  EXPECT_EQ(missing.rfind("HTTP/1.1 404", 0), 0u) << missing;
  const std::string post = HttpExchange(port, "POST /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(post.rfind("HTTP/1.1 405", 0), 0u) << post;
}

TEST_F(ServerMetricsTest, EndpointRefusesABusyOrMalformedAddress) {
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> first =
      MetricsEndpoint::Start("127.0.0.1:0", metrics_.registry());
  ASSERT_TRUE(first.ok());
  const std::string taken = absl::StrCat("127.0.0.1:", (*first)->port());
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> second =
      MetricsEndpoint::Start(taken, metrics_.registry());
  EXPECT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("--metrics-listen=" + taken), std::string::npos)
      << second.status();
  EXPECT_FALSE(MetricsEndpoint::Start("no-port-here", metrics_.registry()).ok());
}

}  // namespace
}  // namespace slotserve::server
