// A gRPC client enforces its own deadline and cancels; the server's copy of the deadline trails
// it (the timeout is sent rounded up, and counted from the request's arrival). A cancel that
// close to the deadline is taken for the deadline (server/grpc/grpc_submission.h).
#include <gtest/gtest.h>

#include <chrono>

#include "server/grpc/grpc_submission.h"

namespace slotserve::server {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(ClientDeadlineTest, ACancelWithinTheRoundingOfTheTimeoutIsTheDeadline) {
  const auto started = std::chrono::system_clock::now();
  const CallTimes two_seconds{started, started + seconds(2)};
  // 1% of 2 s plus 5 ms: 25 ms before the server's deadline and later.
  EXPECT_FALSE(ClientDeadlineReached(two_seconds, started + milliseconds(1000)));
  EXPECT_FALSE(ClientDeadlineReached(two_seconds, started + milliseconds(1970)));
  EXPECT_TRUE(ClientDeadlineReached(two_seconds, started + milliseconds(1976)));
  EXPECT_TRUE(ClientDeadlineReached(two_seconds, started + milliseconds(2100)));
  // A short timeout keeps the 5 ms for the request's way to the server.
  const CallTimes tenth{started, started + milliseconds(100)};
  EXPECT_FALSE(ClientDeadlineReached(tenth, started + milliseconds(90)));
  EXPECT_TRUE(ClientDeadlineReached(tenth, started + milliseconds(95)));
}

TEST(ClientDeadlineTest, WithoutADeadlineACancelIsACancel) {
  const auto started = std::chrono::system_clock::now();
  const CallTimes none{started, std::chrono::system_clock::time_point::max()};
  EXPECT_FALSE(ClientDeadlineReached(none, started + seconds(3600)));
}

}  // namespace
}  // namespace slotserve::server
