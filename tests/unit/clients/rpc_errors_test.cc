// slotserve-cli's one-line failures: a server that cannot be reached, and a server that
// answered UNAVAILABLE because its session store cannot be reached, are told apart.
#include "clients/cli/rpc_errors.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"

namespace slotserve::clients {
namespace {

TEST(RpcErrorsTest, AnUnreachableServerAsksWhetherItRuns) {
  const std::string line = DescribeRpcFailure(
      grpc::Status(grpc::StatusCode::UNAVAILABLE, "failed to connect to all addresses"),
      "localhost:50051");
  EXPECT_TRUE(absl::StrContains(line, "cannot reach the server at localhost:50051")) << line;
  EXPECT_TRUE(absl::StrContains(line, "is slotserve-server running there?")) << line;
  EXPECT_TRUE(absl::StrContains(line, "failed to connect to all addresses")) << line;
}

TEST(RpcErrorsTest, AnUnreachableSessionStoreSaysTheServerAnswered) {
  const std::string message =
      "session store redis://10.0.0.5:6379: storing new session ss-1: timed out after 2s "
      "(Resource temporarily unavailable)";
  const std::string line =
      DescribeRpcFailure(grpc::Status(grpc::StatusCode::UNAVAILABLE, message), "localhost:50051");
  EXPECT_TRUE(absl::StrContains(line, "the server at localhost:50051 answered")) << line;
  EXPECT_TRUE(absl::StrContains(line, "session store is unreachable")) << line;
  EXPECT_TRUE(absl::StrContains(line, message)) << line;
  EXPECT_FALSE(absl::StrContains(line, "cannot reach the server")) << line;
}

}  // namespace
}  // namespace slotserve::clients
