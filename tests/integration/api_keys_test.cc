// --api-keys-file on a real server: slotserve.v1 calls and HTTP /v1/ requests without a key
// or with a wrong one are refused (UNAUTHENTICATED / 401 invalid_api_key) and counted; the
// right key works through the stub, the CLI and HTTP; health stays open; SIGHUP rereads the
// file (a new key works, a removed one stops working, a broken file keeps the old keys).
#include <signal.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

class ApiKeysTest : public ServerTest {
 protected:
  void SetUp() override {
    char name[] = "/tmp/slotserve-keys-XXXXXX";
    close(mkstemp(name));
    keys_file_ = name;
    WriteKeys("# the test's keys\nfirst-key\n\nsecond-key\n");
    StartServer({"--api-keys-file=" + keys_file_, "--http-listen=127.0.0.1:0"});
  }
  void TearDown() override { std::remove(keys_file_.c_str()); }

  void WriteKeys(const std::string& text) { std::ofstream(keys_file_, std::ios::trunc) << text; }

  // GetModelInfo's status with `key` ("" = no authorization metadata).
  grpc::Status InfoStatus(const std::string& key) {
    grpc::ClientContext context;
    if (!key.empty()) context.AddMetadata("authorization", "Bearer " + key);
    v1::ModelInfo info;
    return stub_->GetModelInfo(&context, v1::GetModelInfoRequest(), &info);
  }

  // Reloads with SIGHUP and waits for the server's log line about it (the n-th).
  void Reload(int nth) {
    server_->Signal(SIGHUP);
    ASSERT_TRUE(WaitFor(
        [&] {
          const std::string log = server_->log();
          size_t count = 0;
          for (size_t at = log.find("SIGHUP: "); at != std::string::npos;
               at = log.find("SIGHUP: ", at + 1)) {
            ++count;
          }
          return count >= static_cast<size_t>(nth);
        },
        absl::Seconds(10)))
        << server_->log();
  }

  double Refused(const char* api) {
    return MetricValue(Scrape(),
                       absl::StrCat("slotserve_unauthenticated_requests_total{api=\"", api, "\"}"))
        .value_or(-1);
  }

  std::string keys_file_;
};

TEST_F(ApiKeysTest, GrpcCallsNeedAValidKeyAndRefusalsAreCounted) {
  EXPECT_EQ(Refused("grpc"), 0);
  EXPECT_EQ(InfoStatus("").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  const grpc::Status wrong = InfoStatus("not-a-key");
  EXPECT_EQ(wrong.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_FALSE(absl::StrContains(wrong.error_message(), "not-a-key"));
  EXPECT_TRUE(InfoStatus("first-key").ok());
  EXPECT_TRUE(InfoStatus("second-key").ok());

  // Generate (a stream) is refused the same way, and works with the key.
  const StreamResult refused = Generate(*stub_, GreedyTextRequest("In the beginning", 3));
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Refused("grpc"), 3);
  EXPECT_FALSE(absl::StrContains(server_->log(), "not-a-key")) << "keys must never be logged";

  // Health stays open (ServerTest's own start-up check asked without a key too).
  EXPECT_EQ(HealthStatus(), grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_EQ(HealthStatus("slotserve.v1.SlotServe"), grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST_F(ApiKeysTest, CliSendsTheKeyFromTheFlagOrTheEnvironment) {
  const std::vector<std::string> base = {CliBinary(), "--server=" + server_->address(),
                                         "--timeout=10s"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> argv = base;
    argv.insert(argv.end(), more.begin(), more.end());
    return RunCommand(argv);
  };
  const CommandResult missing = with({"info"});
  EXPECT_EQ(missing.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(missing.err, "needs a valid API key")) << missing.err;
  EXPECT_EQ(with({"--api-key=wrong", "info"}).exit_status, 1);
  const CommandResult right = with(
      {"--api-key=first-key", "complete", "--max-new-tokens=3", "--quiet", "In the beginning"});
  EXPECT_EQ(right.exit_status, 0) << right.err;
  EXPECT_EQ(with({"health"}).exit_status, 0);
  setenv("SLOTSERVE_API_KEY", "second-key", 1);
  const CommandResult from_env = with({"info"});
  unsetenv("SLOTSERVE_API_KEY");
  EXPECT_EQ(from_env.exit_status, 0) << from_env.err;
}

TEST_F(ApiKeysTest, HttpV1RoutesAnswer401InOpenAisFormat) {
  // curl, which sends the header as any HTTP client (and the openai SDK's apiKey) does.
  const auto curl = [&](const std::string& path, std::vector<std::string> more) {
    std::vector<std::string> argv = {"/usr/bin/curl", "-sS", "--max-time", "10", "-w",
                                     "\n%{http_code}"};
    argv.insert(argv.end(), more.begin(), more.end());
    argv.push_back(absl::StrCat("http://127.0.0.1:", server_->http_port(), path));
    return RunCommand(argv).out;
  };
  const std::string missing = curl("/v1/models", {});
  EXPECT_TRUE(absl::EndsWith(missing, "\n401")) << missing;
  EXPECT_TRUE(absl::StrContains(missing, "\"code\":\"invalid_api_key\"")) << missing;
  EXPECT_TRUE(absl::StrContains(missing, "\"type\":\"invalid_request_error\"")) << missing;
  const std::vector<std::string> post = {"-H", "Content-Type: application/json", "-d",
                                         R"({"prompt":"In","max_tokens":2})"};
  std::vector<std::string> wrong = post;
  wrong.insert(wrong.end(), {"-H", "Authorization: Bearer nope"});
  EXPECT_TRUE(absl::EndsWith(curl("/v1/completions", wrong), "\n401"));
  std::vector<std::string> right = post;
  right.insert(right.end(), {"-H", "Authorization: Bearer first-key"});
  const std::string completed = curl("/v1/completions", right);
  EXPECT_TRUE(absl::EndsWith(completed, "\n200")) << completed;
  // An unknown /v1/ route does not tell a client without a key that it does not exist.
  EXPECT_TRUE(absl::EndsWith(curl("/v1/nothing", {}), "\n401"));
  EXPECT_TRUE(absl::EndsWith(curl("/health", {}), "\n200"));
  // The tokenizer's routes need a key too.
  EXPECT_TRUE(absl::EndsWith(curl("/tokenize", wrong), "\n401"));
  EXPECT_TRUE(absl::EndsWith(curl("/tokenize", right), "\n400"))
      << "past the key: max_tokens is no /tokenize parameter";
  EXPECT_EQ(Refused("http"), 4);
}

TEST_F(ApiKeysTest, SighupReloadsTheKeys) {
  WriteKeys("second-key\nthird-key\n");
  Reload(1);
  EXPECT_TRUE(absl::StrContains(server_->log(), "reloaded 2 API keys")) << server_->log();
  EXPECT_TRUE(InfoStatus("third-key").ok());
  EXPECT_TRUE(InfoStatus("second-key").ok());
  EXPECT_EQ(InfoStatus("first-key").error_code(), grpc::StatusCode::UNAUTHENTICATED);

  // A file that cannot be used keeps the keys in force.
  WriteKeys("# emptied by mistake\n");
  Reload(2);
  EXPECT_TRUE(absl::StrContains(server_->log(), "keeping the 2 API keys in force"))
      << server_->log();
  EXPECT_TRUE(InfoStatus("third-key").ok());

  // The server still drains and exits cleanly after the reloads.
  server_->Terminate();
  EXPECT_EQ(server_->WaitForExit(absl::Seconds(30)), 0) << server_->log();
}

}  // namespace
}  // namespace slotserve::testing
