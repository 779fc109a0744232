// SIGTERM (docs/ARCHITECTURE.md "A request's path"): health goes NOT_SERVING, new requests are
// refused, running ones finish (bounded by --drain-timeout), then the process exits 0.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/time/clock.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

class ShutdownTest : public ServerTest {};

// The signals a thread of `pid` blocks (the SigBlk line of /proc/PID/task/TID/status).
uint64_t BlockedSignals(pid_t pid, const std::string& tid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/task/" + tid + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("SigBlk:", 0) == 0) return std::stoull(line.substr(7), nullptr, 16);
  }
  ADD_FAILURE() << "no SigBlk line for thread " << tid;
  return 0;
}

// Only the main thread may take SIGTERM, SIGINT and SIGHUP (in sigwait, which unblocks them
// while it waits); any other thread that did not block them would die of one that arrives while
// the main thread is busy. The server's threads include those libraries start before main
// (OpenBLAS's pool), gRPC's, the engine's and the compute workers (--threads=2).
TEST_F(ShutdownTest, EveryThreadButTheSignalWaiterBlocksTheShutdownSignals) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--threads=2", "--http-listen=127.0.0.1:0"}));
  const uint64_t shutdown_signals = (uint64_t{1} << (SIGTERM - 1)) | (uint64_t{1} << (SIGINT - 1)) |
                                    (uint64_t{1} << (SIGHUP - 1));
  const pid_t pid = server_->pid();
  int threads = 0;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    const std::string tid = task.path().filename();
    if (tid == std::to_string(pid)) continue;  // the main thread, waiting in sigwait
    ++threads;
    EXPECT_EQ(BlockedSignals(pid, tid) & shutdown_signals, shutdown_signals)
        << "thread " << tid << " does not block SIGTERM, SIGINT and SIGHUP";
  }
  EXPECT_GT(threads, 3);
  server_->Terminate();
  EXPECT_EQ(server_->WaitForExit(absl::Seconds(30)), 0) << server_->log();
}

TEST_F(ShutdownTest, SigtermLetsRunningStreamsFinishRefusesNewOnesAndExitsZero) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--max-slots=8", "--drain-timeout=120s"}));
  const uint32_t tokens = TokensLasting(*stub_, absl::Seconds(3));
  std::vector<std::unique_ptr<BackgroundStream>> running;
  for (const char* prompt : {"In the beginning", "And God said", "Let there be light"}) {
    running.push_back(
        std::make_unique<BackgroundStream>(channel_, GreedyTextRequest(prompt, tokens)));
  }
  for (auto& stream : running) {
    ASSERT_TRUE(WaitFor([&] { return stream->messages_received() > 0; }, absl::Seconds(30)));
  }

  // Issue 15, defect 3: the API's own service name is registered too, and flips with "".
  EXPECT_EQ(HealthStatus("slotserve.v1.SlotServe"), grpc::health::v1::HealthCheckResponse::SERVING);
  server_->Terminate();
  EXPECT_TRUE(
      WaitFor([&] { return HealthStatus() == grpc::health::v1::HealthCheckResponse::NOT_SERVING; },
              absl::Seconds(10)));
  EXPECT_EQ(HealthStatus("slotserve.v1.SlotServe"),
            grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  const StreamResult refused = Generate(*stub_, GreedyTextRequest("x", 4));
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << refused.status.error_message();
  int still_running = 0;
  for (auto& stream : running) still_running += stream->done() ? 0 : 1;
  EXPECT_GT(still_running, 0) << "every stream had finished before the refusal was checked; "
                                 "the test cannot show that draining waits for them";

  for (auto& stream : running) {
    const StreamResult result = stream->Wait();
    ASSERT_TRUE(result.status.ok()) << result.status.error_message();
    EXPECT_EQ(result.ids.size(), tokens);
    EXPECT_EQ(result.finished->finish_reason(), v1::FINISH_REASON_LENGTH);
  }
  EXPECT_EQ(server_->WaitForExit(absl::Seconds(30)), 0) << server_->log();
  EXPECT_NE(server_->log().find("drained"), std::string::npos) << server_->log();
}

TEST_F(ShutdownTest, DrainTimeoutCutsOffWhatIsStillRunningAndStillExitsZero) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--max-slots=2", "--drain-timeout=300ms"}));
  const uint32_t tokens = TokensLasting(*stub_, absl::Seconds(30));
  BackgroundStream stream(channel_, GreedyTextRequest("In the beginning", tokens));
  ASSERT_TRUE(WaitFor([&] { return stream.messages_received() > 0; }, absl::Seconds(30)));
  server_->Terminate();
  const StreamResult result = stream.Wait();
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << result.status.error_message();
  EXPECT_LT(result.ids.size(), tokens);
  EXPECT_EQ(server_->WaitForExit(absl::Seconds(30)), 0) << server_->log();
  EXPECT_NE(server_->log().find("drain timeout"), std::string::npos) << server_->log();
}

}  // namespace
}  // namespace slotserve::testing
