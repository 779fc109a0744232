// Beam search through a real server: Generate streams the best hypothesis as one Tokens
// message, then one Finished carrying the n-best (best first, scores that follow from the
// length penalty); Complete answers the same; refusals quote the value; ModelInfo reports
// --max-beam-width capped by the slots; a cancelled beam gives every slot back and the server
// keeps serving.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

class BeamTest : public ServerTest {};

v1::GenerateRequest BeamRequest(uint32_t width, uint32_t n_best, float length_penalty,
                                uint32_t max_new_tokens) {
  v1::GenerateRequest request;
  request.set_text("In the beginning God created");
  request.mutable_stopping()->set_max_new_tokens(max_new_tokens);
  request.mutable_stopping()->set_ignore_eos(true);
  request.mutable_beam()->set_width(width);
  request.mutable_beam()->set_n_best(n_best);
  request.mutable_beam()->set_length_penalty(length_penalty);
  return request;
}

std::vector<int32_t> Ids(const v1::Hypothesis& hypothesis) {
  return {hypothesis.ids().begin(), hypothesis.ids().end()};
}

TEST_F(BeamTest, GenerateStreamsTheBestThenTheNBestAndCompleteAgrees) {
  StartServer({"--max-slots=6"});
  const StreamResult stream = Generate(*stub_, BeamRequest(4, 3, 0.5f, 8));
  ASSERT_TRUE(stream.status.ok()) << stream.status.error_message();
  ASSERT_EQ(stream.messages.size(), 2u) << "one Tokens message, then Finished";
  ASSERT_TRUE(stream.messages[0].has_tokens());
  ASSERT_TRUE(stream.finished.has_value());
  const v1::Finished& finished = *stream.finished;
  ASSERT_EQ(finished.hypotheses_size(), 3);
  EXPECT_EQ(stream.ids, Ids(finished.hypotheses(0)));
  EXPECT_EQ(stream.text, finished.hypotheses(0).text());
  EXPECT_FALSE(stream.text.empty());
  EXPECT_EQ(finished.generated_tokens(), 8u);
  EXPECT_EQ(finished.finish_reason(), v1::FINISH_REASON_LENGTH);
  for (int i = 0; i < finished.hypotheses_size(); ++i) {
    const v1::Hypothesis& h = finished.hypotheses(i);
    ASSERT_EQ(h.ids_size(), 8) << "eos ignored: every hypothesis reaches max_new_tokens";
    EXPECT_LE(h.logprob_sum(), 0.0);
    EXPECT_NEAR(h.score(), h.logprob_sum() / std::pow(8.0, 0.5), 1e-9);
    EXPECT_EQ(h.finish_reason(), v1::FINISH_REASON_LENGTH);
    if (i > 0) EXPECT_GE(finished.hypotheses(i - 1).score(), h.score());
    for (int j = 0; j < i; ++j) EXPECT_NE(Ids(finished.hypotheses(j)), Ids(h));
  }

  grpc::ClientContext context;
  v1::CompleteResponse complete;
  ASSERT_TRUE(stub_->Complete(&context, BeamRequest(4, 3, 0.5f, 8), &complete).ok());
  EXPECT_EQ(complete.text(), stream.text);
  ASSERT_EQ(complete.finished().hypotheses_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Ids(complete.finished().hypotheses(i)), Ids(finished.hypotheses(i)));
    EXPECT_DOUBLE_EQ(complete.finished().hypotheses(i).score(), finished.hypotheses(i).score());
  }
  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(10)));
}

TEST_F(BeamTest, ContradictoryOrOutOfRangeOptionsAreRefusedQuotingTheValue) {
  StartServer({"--max-slots=8", "--max-beam-width=4"});
  EXPECT_EQ(GetModelInfo(*stub_).max_beam_width(), 4u);
  struct Refusal {
    v1::GenerateRequest request;
    std::string message;
  };
  std::vector<Refusal> refusals;
  refusals.push_back({BeamRequest(5, 1, 0.0f, 4),
                      "beam.width must be in [1, 4] (the server's --max-beam-width, capped by "
                      "its slots), got 5"});
  refusals.push_back(
      {BeamRequest(3, 4, 0.0f, 4), "beam.n_best must be in [1, beam.width = 3], got 4"});
  refusals.push_back({BeamRequest(3, 1, NAN, 4), "beam.length_penalty must be finite, got nan"});
  refusals.push_back({BeamRequest(3, 1, 0.0f, 4), "sampling.temperature must be 0 or unset"});
  refusals.back().request.mutable_sampling()->set_temperature(0.7f);
  refusals.push_back({BeamRequest(3, 1, 0.0f, 4), "got 0.7"});
  refusals.back().request.mutable_sampling()->set_temperature(0.7f);
  refusals.push_back({BeamRequest(3, 1, 0.0f, 4), "sampling.seed must be unset"});
  refusals.back().request.mutable_sampling()->set_seed(7);
  refusals.push_back({BeamRequest(3, 1, 0.0f, 4), "n must be 1 with beam.width = 3"});
  refusals.back().request.set_n(2);
  refusals.push_back({BeamRequest(3, 1, 0.0f, 4), "logprobs.enabled must be false"});
  refusals.back().request.mutable_logprobs()->set_enabled(true);
  refusals.push_back({BeamRequest(3, 1, 0.0f, 4), "session must be unset"});
  refusals.back().request.mutable_session()->set_keep(true);
  for (const Refusal& refusal : refusals) {
    const StreamResult result = Generate(*stub_, refusal.request);
    EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << refusal.message << ": " << result.status.error_message();
    EXPECT_NE(result.status.error_message().find(refusal.message), std::string::npos)
        << result.status.error_message();
  }
  // A temperature of 0, set explicitly, is greedy's and allowed; the server still serves.
  v1::GenerateRequest zero = BeamRequest(3, 2, 0.0f, 4);
  zero.mutable_sampling()->set_temperature(0.0f);
  const StreamResult served = Generate(*stub_, zero);
  ASSERT_TRUE(served.status.ok()) << served.status.error_message();
  EXPECT_EQ(served.finished->hypotheses_size(), 2);
  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(10)));
}

TEST_F(BeamTest, TheWidestBeamIsCappedByTheSlots) {
  StartServer({"--max-slots=2"});
  EXPECT_EQ(GetModelInfo(*stub_).max_beam_width(), 2u);
  const StreamResult result = Generate(*stub_, BeamRequest(3, 1, 0.0f, 4));
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(result.status.error_message().find("beam.width must be in [1, 2]"), std::string::npos)
      << result.status.error_message();
}

TEST_F(BeamTest, AWidestBeamBelowOneIsRefusedAtStartUp) {
  const CommandResult result =
      RunCommand({ServerBinary(), "--model=" + TinyModelDir(), "--listen=127.0.0.1:0",
                  "--metrics-listen=127.0.0.1:0", "--max-beam-width=0"});
  EXPECT_NE(result.exit_status, 0);
  EXPECT_NE((result.out + result.err).find("--max-beam-width must be > 0, got 0"),
            std::string::npos)
      << result.out << result.err;
}

TEST_F(BeamTest, ACancelledBeamGivesEverySlotBack) {
  StartServer({"--max-slots=4"});
  BackgroundStream beam(channel_, BeamRequest(4, 1, 0.0f, 100000));
  ASSERT_TRUE(
      WaitFor([&] { return GetModelInfo(*stub_).requests_running() == 1; }, absl::Seconds(10)));
  EXPECT_EQ(GetModelInfo(*stub_).slots_free(), 0u) << "a beam of 4 holds the 4 slots";
  beam.Cancel();
  const StreamResult cancelled = beam.Wait();
  EXPECT_EQ(cancelled.status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(cancelled.ids.empty()) << "beam tokens are final only when the search ends";
  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(10)));
  const StreamResult after = Generate(*stub_, GreedyTextRequest("And God said", 4));
  EXPECT_TRUE(after.status.ok()) << after.status.error_message();
}

}  // namespace
}  // namespace slotserve::testing
