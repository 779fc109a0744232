// Real gRPC client helpers for the integration tests (generated stubs, no mocks).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include "absl/time/time.h"
#include "slotserve/v1/slotserve.grpc.pb.h"

namespace slotserve::testing {

// Everything one Generate call delivered.
struct StreamResult {
  grpc::Status status;
  std::vector<v1::GenerateResponse> messages;
  std::vector<int32_t> ids;  // all token messages' ids, in order
  std::string text;          // all token messages' text, in order
  std::optional<v1::Finished> finished;
};

StreamResult Generate(v1::SlotServe::Stub& stub, const v1::GenerateRequest& request,
                      absl::Duration deadline = absl::Seconds(60));

// A text prompt, greedy (temperature 0), max_new_tokens as given, eos ignored so the length is
// exact.
v1::GenerateRequest GreedyTextRequest(const std::string& text, uint32_t max_new_tokens);

// A token-id prompt, greedy, eos ignored, as one turn of a session: kept when `keep`,
// continuing `handle` when it is not empty.
v1::GenerateRequest SessionTurn(const std::vector<int32_t>& prompt, bool keep,
                                const std::string& handle, uint32_t max_new_tokens);

v1::ModelInfo GetModelInfo(v1::SlotServe::Stub& stub);

// Polls `condition` every 2 ms until it holds or `timeout` passes.
bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout);

// GET http://127.0.0.1:port/path over a plain socket: the response body ("" on failure).
std::string HttpGet(int port, const std::string& path);

// The value of the Prometheus text-format series `series` (name plus labels exactly as
// written, e.g. slotserve_requests_total{outcome="length"}), or nullopt when absent.
std::optional<double> MetricValue(const std::string& scrape, const std::string& series);

// How many greedy tokens one stream generates in about `duration` on this machine now, so
// that "a stream still running" stays true on fast and slow machines alike.
uint32_t TokensLasting(v1::SlotServe::Stub& stub, absl::Duration duration);

}  // namespace slotserve::testing

namespace slotserve::testing {

// A Generate call running on its own thread, so a test can act while it streams.
class BackgroundStream {
 public:
  BackgroundStream(std::shared_ptr<grpc::Channel> channel, v1::GenerateRequest request);
  ~BackgroundStream();  // cancels and joins

  // Token messages received so far.
  int messages_received() const { return messages_.load(); }
  bool done() const { return done_.load(); }
  void Cancel() { context_.TryCancel(); }
  // Joins the call and returns what it delivered.
  StreamResult Wait();

 private:
  grpc::ClientContext context_;
  std::unique_ptr<v1::SlotServe::Stub> stub_;
  StreamResult result_;
  std::atomic<int> messages_{0};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// A finished child process's exit status and output.
struct CommandResult {
  int exit_status = -1;
  std::string out;
  std::string err;
};

// Runs `argv` (argv[0] a path) to completion.
CommandResult RunCommand(const std::vector<std::string>& argv);

// ExportSession of `handle` (the blob in *state) and ImportSession of `state` (the new handle in
// *handle), returning the call's status.
grpc::Status ExportSession(v1::SlotServe::Stub& stub, const std::string& handle,
                           std::string* state);
grpc::Status ImportSession(v1::SlotServe::Stub& stub, const std::string& state,
                           std::string* handle);

}  // namespace slotserve::testing
