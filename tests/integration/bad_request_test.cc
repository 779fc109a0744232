// Bad requests get INVALID_ARGUMENT with a message naming the field, on Generate and
// Complete alike, while a stream already running carries on unharmed.
#include <functional>

#include <gtest/gtest.h>
#include "absl/time/clock.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

struct BadRequest {
  std::string what;
  std::function<void(v1::GenerateRequest&)> spoil;
  std::string named_field;  // must appear in the error message
};

std::vector<BadRequest> BadRequests() {
  return {
      {"empty prompt text", [](auto& r) { r.set_text(""); }, "text must not be empty"},
      {"no prompt at all", [](auto& r) { r.clear_prompt(); }, "prompt must be set"},
      {"empty token ids", [](auto& r) { r.mutable_token_ids(); }, "token_ids.ids"},
      {"unknown token id",
       [](auto& r) {
         r.mutable_token_ids()->add_ids(5);
         r.mutable_token_ids()->add_ids(400);
       },
       "token_ids.ids[1]"},
      {"negative token id", [](auto& r) { r.mutable_token_ids()->add_ids(-3); },
       "token_ids.ids[0]"},
      {"negative temperature", [](auto& r) { r.mutable_sampling()->set_temperature(-0.5f); },
       "sampling.temperature"},
      {"top_p above 1", [](auto& r) { r.mutable_sampling()->set_top_p(1.5f); }, "sampling.top_p"},
      {"min_p above 1", [](auto& r) { r.mutable_sampling()->set_min_p(2.0f); }, "sampling.min_p"},
      {"max_new_tokens beyond the limit",
       [](auto& r) { r.mutable_stopping()->set_max_new_tokens(300000); },
       "stopping.max_new_tokens"},
      // Issue 15, defect 2: the message quotes the value sent, not a clamped one.
      {"max_new_tokens of 2^32-1",
       [](auto& r) { r.mutable_stopping()->set_max_new_tokens(4294967295u); },
       "stopping.max_new_tokens must be in [1, 200000] (0 = the default, 128), got 4294967295"},
      {"top_n of 2^32-1", [](auto& r) { r.mutable_logprobs()->set_top_n(4294967295u); },
       "got 4294967295"},
      {"prompt longer than allowed",
       [](auto& r) {
         for (int i = 0; i < 40; ++i) r.mutable_token_ids()->add_ids(5);
       },
       "prompt must be at most 32"},
      {"invalid UTF-8 text", [](auto& r) { r.set_text("In the \xff\xfe beginning"); },
       "text must be valid UTF-8"},
      {"invalid UTF-8 stop sequence",
       [](auto& r) { r.mutable_stopping()->add_stop_sequences("ab\xc3"); },
       "stopping.stop_sequences[0]"},
      {"too many logprob alternatives", [](auto& r) { r.mutable_logprobs()->set_top_n(1000); },
       "logprobs.top_n"},
  };
}

class BadRequestTest : public ServerTest {
 protected:
  void SetUp() override { StartServer({"--max-slots=4", "--max-prompt-tokens=32"}); }
};

TEST_F(BadRequestTest, EachGetsInvalidArgumentNamingTheFieldWhileAnotherStreamContinues) {
  const uint32_t long_stream_tokens = TokensLasting(*stub_, absl::Seconds(4));
  BackgroundStream running(channel_, GreedyTextRequest("In the beginning", long_stream_tokens));
  ASSERT_TRUE(WaitFor([&] { return running.messages_received() > 0; }, absl::Seconds(30)));

  for (const BadRequest& bad : BadRequests()) {
    SCOPED_TRACE(bad.what);
    v1::GenerateRequest request = GreedyTextRequest("And God said", 8);
    bad.spoil(request);

    const StreamResult stream = Generate(*stub_, request);
    EXPECT_EQ(stream.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << stream.status.error_message();
    EXPECT_NE(stream.status.error_message().find(bad.named_field), std::string::npos)
        << "message: " << stream.status.error_message();
    EXPECT_TRUE(stream.messages.empty());

    grpc::ClientContext context;
    v1::CompleteResponse response;
    const grpc::Status status = stub_->Complete(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find(bad.named_field), std::string::npos)
        << "message: " << status.error_message();
  }
  EXPECT_FALSE(running.done()) << "the long stream ended before the bad requests were all sent; "
                                  "it cannot show it was unharmed";

  const StreamResult survivor = running.Wait();
  ASSERT_TRUE(survivor.status.ok()) << survivor.status.error_message();
  EXPECT_EQ(survivor.ids.size(), long_stream_tokens);
  EXPECT_EQ(survivor.finished->finish_reason(), v1::FINISH_REASON_LENGTH);
  // Refused requests never took a slot.
  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(5)));
  const std::string scrape = Scrape();
  EXPECT_EQ(MetricValue(scrape, "slotserve_requests_total{outcome=\"invalid_argument\"}"),
            2.0 * BadRequests().size());
}

}  // namespace
}  // namespace slotserve::testing
