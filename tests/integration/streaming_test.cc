// Generate streams tokens in order and ends with one `finished` message; Complete returns the
// same generation whole; GetModelInfo and Tokenize describe the served model.
#include <gtest/gtest.h>

#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

class StreamingTest : public ServerTest {
 protected:
  void SetUp() override { StartServer({"--max-slots=8"}); }

  v1::CompleteResponse Complete(const v1::GenerateRequest& request) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    v1::CompleteResponse response;
    grpc::Status status = stub_->Complete(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  v1::TokenizeResponse Tokenize(const std::string& text) {
    grpc::ClientContext context;
    v1::TokenizeRequest request;
    request.set_text(text);
    v1::TokenizeResponse response;
    EXPECT_TRUE(stub_->Tokenize(&context, request, &response).ok());
    return response;
  }
};

TEST_F(StreamingTest, TokensArriveInOrderThenExactlyOneFinishedMessageLast) {
  const std::string prompt = "In the beginning God created";
  StreamResult stream = Generate(*stub_, GreedyTextRequest(prompt, 24));
  ASSERT_TRUE(stream.status.ok()) << stream.status.error_message();
  ASSERT_GE(stream.messages.size(), 2u);
  for (size_t i = 0; i + 1 < stream.messages.size(); ++i) {
    EXPECT_TRUE(stream.messages[i].has_tokens()) << "message " << i << " is not a token message";
  }
  ASSERT_TRUE(stream.messages.back().has_finished());
  const v1::Finished& finished = stream.messages.back().finished();
  EXPECT_EQ(finished.finish_reason(), v1::FINISH_REASON_LENGTH);
  EXPECT_EQ(finished.generated_tokens(), 24u);
  EXPECT_EQ(stream.ids.size(), 24u);
  // BOS plus the prompt's pieces.
  EXPECT_EQ(finished.prompt_tokens(), Tokenize(prompt).ids_size() + 1u);
  EXPECT_FALSE(finished.request_id().empty());
  const v1::Timings& timings = finished.timings();
  EXPECT_GE(timings.queue_seconds(), 0.0);
  EXPECT_LE(timings.first_token_seconds(), timings.total_seconds());
  EXPECT_GT(timings.total_seconds(), 0.0);

  // The same greedy request through Complete: identical ids in identical order.
  const v1::CompleteResponse whole = Complete(GreedyTextRequest(prompt, 24));
  EXPECT_EQ(std::vector<int32_t>(whole.token_ids().begin(), whole.token_ids().end()), stream.ids);
}

TEST_F(StreamingTest, CompleteEqualsTheConcatenatedStream) {
  for (const std::string prompt : {"And God said", "Let there be light", "x"}) {
    SCOPED_TRACE(prompt);
    const StreamResult stream = Generate(*stub_, GreedyTextRequest(prompt, 40));
    ASSERT_TRUE(stream.status.ok()) << stream.status.error_message();
    const v1::CompleteResponse whole = Complete(GreedyTextRequest(prompt, 40));
    EXPECT_EQ(whole.text(), stream.text);
    EXPECT_EQ(std::vector<int32_t>(whole.token_ids().begin(), whole.token_ids().end()), stream.ids);
    EXPECT_EQ(whole.finished().generated_tokens(), stream.finished->generated_tokens());
  }
  // A token-id prompt too.
  v1::GenerateRequest by_ids = GreedyTextRequest("", 30);
  by_ids.mutable_token_ids()->add_ids(1);
  by_ids.mutable_token_ids()->add_ids(17);
  by_ids.mutable_token_ids()->add_ids(42);
  const StreamResult stream = Generate(*stub_, by_ids);
  ASSERT_TRUE(stream.status.ok()) << stream.status.error_message();
  EXPECT_EQ(Complete(by_ids).text(), stream.text);
  EXPECT_EQ(stream.finished->prompt_tokens(), 3u);
}

TEST_F(StreamingTest, TheSameSeedGivesTheSameTokensAndIsReported) {
  v1::GenerateRequest request = GreedyTextRequest("In the beginning", 32);
  request.mutable_sampling()->set_temperature(1.0f);
  request.mutable_sampling()->set_top_k(50);
  request.mutable_sampling()->set_seed(12345);
  const StreamResult first = Generate(*stub_, request);
  const StreamResult second = Generate(*stub_, request);
  ASSERT_TRUE(first.status.ok() && second.status.ok());
  EXPECT_EQ(first.ids, second.ids);
  EXPECT_EQ(first.finished->seed(), 12345u);
}

TEST_F(StreamingTest, StopSequenceEndsTheStreamBeforeIt) {
  const StreamResult free_run = Generate(*stub_, GreedyTextRequest("And God said", 60));
  ASSERT_TRUE(free_run.status.ok());
  // A stretch of the greedy text from its middle becomes the stop sequence.
  const size_t cut = free_run.text.size() / 2;
  ASSERT_GT(free_run.text.size(), 8u);
  std::string stop = free_run.text.substr(cut, 3);
  v1::GenerateRequest request = GreedyTextRequest("And God said", 60);
  request.mutable_stopping()->add_stop_sequences(stop);
  const StreamResult stopped = Generate(*stub_, request);
  ASSERT_TRUE(stopped.status.ok()) << stopped.status.error_message();
  EXPECT_EQ(stopped.finished->finish_reason(), v1::FINISH_REASON_STOP_SEQUENCE);
  EXPECT_EQ(stopped.text, free_run.text.substr(0, free_run.text.find(stop)));
}

TEST_F(StreamingTest, LogprobsComeWithEveryTokenAndItsAlternatives) {
  v1::GenerateRequest request = GreedyTextRequest("In the beginning", 10);
  request.mutable_logprobs()->set_enabled(true);
  request.mutable_logprobs()->set_top_n(3);
  const StreamResult stream = Generate(*stub_, request);
  ASSERT_TRUE(stream.status.ok());
  int seen = 0;
  for (const v1::GenerateResponse& message : stream.messages) {
    if (!message.has_tokens()) continue;
    ASSERT_EQ(message.tokens().logprobs_size(), message.tokens().ids_size());
    for (int i = 0; i < message.tokens().ids_size(); ++i, ++seen) {
      const v1::TokenLogprob& entry = message.tokens().logprobs(i);
      EXPECT_EQ(entry.id(), message.tokens().ids(i));
      EXPECT_LE(entry.logprob(), 0.0f);
      ASSERT_EQ(entry.top_size(), 3);
      // Greedy: the chosen token is the most likely one.
      EXPECT_EQ(entry.top(0).id(), entry.id());
      EXPECT_GE(entry.top(0).logprob(), entry.top(1).logprob());
    }
  }
  EXPECT_EQ(seen, 10);
}

TEST_F(StreamingTest, ModelInfoDescribesTheTinyModelAndThePool) {
  const v1::ModelInfo info = GetModelInfo(*stub_);
  EXPECT_EQ(info.model(), "tiny-abc");
  EXPECT_EQ(info.attention_kind(), "abc");
  EXPECT_EQ(info.attention_memory_size(), 8);
  EXPECT_EQ(info.attention_memory_unit(), "slots");
  EXPECT_EQ(info.vocab_size(), 400);
  EXPECT_EQ(info.d_model(), 64);
  EXPECT_EQ(info.n_layers(), 2);
  EXPECT_EQ(info.n_heads(), 2);
  EXPECT_EQ(info.d_ffn(), 128);
  // ABC per layer and head: K~ and V~ [M x d], z and m [M]; fp32.
  const int64_t per_head = (2 * 8 * 32 + 2 * 8) * 4;
  EXPECT_EQ(info.state_bytes_per_request(), 2 * 2 * per_head);
  EXPECT_EQ(info.slots_total(), 8);
  EXPECT_EQ(info.slots_free(), 8);
  EXPECT_EQ(info.backend(), "cpu");
  EXPECT_EQ(info.bos_id(), 1);
  EXPECT_EQ(info.eos_id(), 2);
}

}  // namespace
}  // namespace slotserve::testing
