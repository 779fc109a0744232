// docs/ARCHITECTURE.md "Request state" fork through a real server: Generate with n = 3 streams
// three choices, each with its choice_index and its own finished message; choice i equals a single
// request with seed + i; a request without n streams exactly as before (choice 0 only); Complete
// refuses n > 1; the pool is full again afterwards.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

class ForkTest : public ServerTest {};

// 65 tokens with --prefix-block=64: the fork point (64) is a block boundary, so a single
// request runs the same prefill chunks as the fork.
v1::GenerateRequest SampledRequest(uint64_t seed, uint32_t n) {
  v1::GenerateRequest request;
  for (int t = 0; t < 65; ++t) request.mutable_token_ids()->add_ids(3 + (t * 17) % 150);
  request.mutable_sampling()->set_temperature(1.0f);
  request.mutable_sampling()->set_seed(seed);
  request.mutable_stopping()->set_max_new_tokens(10);
  request.mutable_stopping()->set_ignore_eos(true);
  if (n > 0) request.set_n(n);
  return request;
}

TEST_F(ForkTest, ChoicesStreamWithTheirIndexAndEqualSingleRequestsWithSeedPlusI) {
  StartServer({"--prefix-block=64", "--max-slots=4"});
  std::vector<std::vector<int32_t>> singles;
  for (uint64_t i = 0; i < 3; ++i) {
    const StreamResult single = Generate(*stub_, SampledRequest(40 + i, 0));
    ASSERT_TRUE(single.status.ok()) << single.status.error_message();
    for (const v1::GenerateResponse& message : single.messages) {
      if (message.has_tokens()) EXPECT_EQ(message.tokens().choice_index(), 0u);
    }
    singles.push_back(single.ids);
  }
  const StreamResult forked = Generate(*stub_, SampledRequest(40, 3));
  ASSERT_TRUE(forked.status.ok()) << forked.status.error_message();
  std::map<uint32_t, std::vector<int32_t>> ids;
  std::vector<uint32_t> finished_order;
  for (const v1::GenerateResponse& message : forked.messages) {
    if (message.has_tokens()) {
      ASSERT_EQ(finished_order.end(), std::find(finished_order.begin(), finished_order.end(),
                                                message.tokens().choice_index()))
          << "tokens of a choice after its finished";
      auto& choice = ids[message.tokens().choice_index()];
      choice.insert(choice.end(), message.tokens().ids().begin(), message.tokens().ids().end());
    } else {
      finished_order.push_back(message.finished().choice_index());
      EXPECT_EQ(message.finished().seed(), 40u + message.finished().choice_index());
      EXPECT_EQ(message.finished().generated_tokens(), 10u);
    }
  }
  ASSERT_EQ(finished_order.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(ids[i], singles[i]) << "choice " << i;
  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(10)));
}

TEST_F(ForkTest, NAboveTheBoundOrOnCompleteIsRefused) {
  StartServer({"--max-n=2"});
  const StreamResult too_many = Generate(*stub_, SampledRequest(1, 3));
  EXPECT_EQ(too_many.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(too_many.status.error_message().find("n must be in [1, 2], got 3"), std::string::npos)
      << too_many.status.error_message();
  grpc::ClientContext context;
  v1::CompleteResponse response;
  const grpc::Status status = stub_->Complete(&context, SampledRequest(1, 2), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace slotserve::testing
