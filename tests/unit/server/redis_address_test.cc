// --session-store addresses (server/redis_session_store.h): redis://host[:port] is taken apart,
// anything else is refused with a message quoting the value, and a store pointed at a port
// where nothing listens answers UNAVAILABLE naming the store instead of failing otherwise.
#include <gtest/gtest.h>

#include "server/redis_session_store.h"

namespace slotserve::server {
namespace {

TEST(RedisAddressTest, HostAndPortAreTakenApart) {
  absl::StatusOr<RedisAddress> address = ParseRedisAddress("redis://cache.internal:6380");
  ASSERT_TRUE(address.ok()) << address.status();
  EXPECT_EQ(address->host, "cache.internal");
  EXPECT_EQ(address->port, 6380);
  EXPECT_EQ(address->text, "redis://cache.internal:6380");
  address = ParseRedisAddress("redis://redis");
  ASSERT_TRUE(address.ok()) << address.status();
  EXPECT_EQ(address->port, 6379);
}

TEST(RedisAddressTest, BadAddressesAreRefusedQuotingThem) {
  for (const char* bad : {"memcached://x:1", "redis://", "redis://h:0", "redis://h:70000",
                          "redis://h:port", "redis://h/db:1", "h:6379"}) {
    const absl::StatusOr<RedisAddress> address = ParseRedisAddress(bad);
    ASSERT_FALSE(address.ok()) << bad;
    EXPECT_EQ(address.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(address.status().message().find(bad), absl::string_view::npos) << address.status();
  }
}

TEST(RedisAddressTest, AStoreWithNothingListeningIsUnavailableNamingIt) {
  // Port 1 on loopback: nothing listens there, the connection is refused at once.
  RedisSessionStore store({.address = *ParseRedisAddress("redis://127.0.0.1:1")});
  const absl::Status ping = store.Ping();
  EXPECT_EQ(ping.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(ping.message().find("session store redis://127.0.0.1:1"), absl::string_view::npos)
      << ping;
  const absl::StatusOr<engine::RequestState> acquired =
      store.Acquire("ss-00000000000000000000000000000000", absl::Now());
  EXPECT_EQ(acquired.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(store.stats().sessions, 0);
}

}  // namespace
}  // namespace slotserve::server
