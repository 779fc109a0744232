// Base fixture: each test starts its own real server process (loopback, free ports) with the
// flags it needs, and talks to it through the generated stubs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include "grpc/health/v1/health.grpc.pb.h"
#include "slotserve/v1/slotserve.grpc.pb.h"
#include "tests/integration/server_process.h"
#include "tests/integration/test_client.h"

namespace slotserve::testing {

class ServerTest : public ::testing::Test {
 protected:
  // Long streams need a limit far above the default.
  void StartServer(std::vector<std::string> flags = {}) {
    flags.insert(flags.begin(), "--max-new-tokens-limit=200000");
    std::string error;
    server_ = ServerProcess::Start(flags, &error);
    ASSERT_NE(server_, nullptr) << error;
    channel_ = server_->ConnectedChannel();
    stub_ = v1::SlotServe::NewStub(channel_);
    ASSERT_EQ(HealthStatus(), grpc::health::v1::HealthCheckResponse::SERVING) << server_->log();
  }

  // The health of `service` ("" = the whole server); UNKNOWN when the check itself fails
  // (NOT_FOUND for a service name the server does not know included).
  grpc::health::v1::HealthCheckResponse::ServingStatus HealthStatus(
      const std::string& service = "") {
    auto health = grpc::health::v1::Health::NewStub(channel_);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    grpc::Status status = health->Check(&context, request, &response);
    return status.ok() ? response.status() : grpc::health::v1::HealthCheckResponse::UNKNOWN;
  }

  std::string Scrape() { return HttpGet(server_->metrics_port(), "/metrics"); }

  // True once every slot is free again and nothing runs or waits.
  bool PoolIsFull() {
    const v1::ModelInfo info = GetModelInfo(*stub_);
    return info.slots_total() > 0 && info.slots_free() == info.slots_total() &&
           info.requests_running() == 0 && info.requests_queued() == 0;
  }

  std::unique_ptr<ServerProcess> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::SlotServe::Stub> stub_;
};

}  // namespace slotserve::testing
