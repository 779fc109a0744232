// docs/ARCHITECTURE.md "Request state" sessions through a real server: a 3-turn conversation
// continued through a kept session streams the greedy tokens of sending the whole conversation from
// scratch; unknown handles are NOT_FOUND, a session in use FAILED_PRECONDITION; a cancelled
// continuation frees the session and its slot.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

class SessionTest : public ServerTest {};

TEST_F(SessionTest, AThreeTurnConversationEqualsTheWholeConversationFromScratch) {
  StartServer();
  const std::vector<int32_t> p1 = {1, 45, 67, 89, 101, 23, 7, 150, 33};
  const std::vector<int32_t> p2 = {12, 250, 31};
  const std::vector<int32_t> p3 = {77, 5, 300, 41};
  const StreamResult r1 = Generate(*stub_, SessionTurn(p1, true, "", 6));
  ASSERT_TRUE(r1.status.ok()) << r1.status.error_message();
  const std::string handle = r1.finished->session_handle();
  ASSERT_EQ(handle.size(), 35u) << handle;  // "ss-" + 32 hex digits
  const StreamResult r2 = Generate(*stub_, SessionTurn(p2, true, handle, 7));
  ASSERT_TRUE(r2.status.ok()) << r2.status.error_message();
  EXPECT_EQ(r2.finished->session_handle(), handle);
  const StreamResult r3 = Generate(*stub_, SessionTurn(p3, false, handle, 8));
  ASSERT_TRUE(r3.status.ok()) << r3.status.error_message();

  std::vector<int32_t> whole = p1;
  whole.insert(whole.end(), r1.ids.begin(), r1.ids.end());
  whole.insert(whole.end(), p2.begin(), p2.end());
  whole.insert(whole.end(), r2.ids.begin(), r2.ids.end());
  whole.insert(whole.end(), p3.begin(), p3.end());
  const StreamResult scratch = Generate(*stub_, SessionTurn(whole, false, "", 8));
  ASSERT_TRUE(scratch.status.ok());
  EXPECT_EQ(r3.ids, scratch.ids);
  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(10)));
  const std::string scrape = Scrape();
  EXPECT_EQ(MetricValue(scrape, "slotserve_sessions"), 1.0) << scrape;
  EXPECT_GT(MetricValue(scrape, "slotserve_session_bytes").value_or(0), 0.0);
  EXPECT_EQ(MetricValue(scrape, "slotserve_session_evictions_total"), 0.0);
}

TEST_F(SessionTest, UnknownHandlesAreNotFoundAndASessionInUseIsAFailedPrecondition) {
  StartServer();
  const StreamResult unknown = Generate(*stub_, SessionTurn({5, 6}, false, "ss-0123", 2));
  EXPECT_EQ(unknown.status.error_code(), grpc::StatusCode::NOT_FOUND);
  const StreamResult first = Generate(*stub_, SessionTurn({5, 6}, true, "", 2));
  ASSERT_TRUE(first.status.ok());
  const std::string handle = first.finished->session_handle();

  // A long continuation holds the session; a second one is refused; cancelling frees it.
  grpc::ClientContext context;
  auto reader = stub_->Generate(&context, SessionTurn({7}, true, handle, 100000));
  v1::GenerateResponse message;
  ASSERT_TRUE(reader->Read(&message));
  const StreamResult refused = Generate(*stub_, SessionTurn({8}, false, handle, 2));
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
      << refused.status.error_message();
  context.TryCancel();
  while (reader->Read(&message)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(10)));
  EXPECT_TRUE(
      WaitFor([&] { return Generate(*stub_, SessionTurn({8}, false, handle, 2)).status.ok(); },
              absl::Seconds(10)));
}

}  // namespace
}  // namespace slotserve::testing
