// An encoder-decoder model served by a real server process (make_tiny_seq2seq_model.sh:
// random weights, the tiny model's SentencePiece tokenizer): GetModelInfo's seq2seq fields and
// the state-part metrics, a text source and its token ids translating alike, the refusals
// quoting what was sent, n = 2 with a source, HTTP's source field and slotserve-cli translate.
// Skipped while the server cannot load a seq2seq directory (the model is built on its own branch).
#include <gtest/gtest.h>
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/integration/http_client.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

constexpr char kSource[] = "And God said, Let there be light";

class Seq2seqServerTest : public ServerTest {
 protected:
  void SetUp() override {
    std::string error;
    server_ = ServerProcess::Start({"--model=" SLOTSERVE_TINY_SEQ2SEQ_MODEL_DIR, "--max-slots=3",
                                    "--max-cross-memories=2", "--http-listen=127.0.0.1:0"},
                                   &error);
    // Before the model lands: config.json's seq2seq keys are unknown, or the directory checks
    // out but the build "cannot run encoder-decoder models yet".
    if (server_ == nullptr && (absl::StrContains(error, "config.json") ||
                               absl::StrContains(error, "encoder-decoder models yet"))) {
      GTEST_SKIP() << "this server does not load the seq2seq model yet: " << error;
    }
    ASSERT_NE(server_, nullptr) << error;
    channel_ = server_->ConnectedChannel();
    stub_ = v1::SlotServe::NewStub(channel_);
  }

  static v1::GenerateRequest Translation(uint32_t max_new_tokens) {
    v1::GenerateRequest request;
    request.mutable_source()->set_text(kSource);
    request.mutable_sampling()->set_temperature(0.0f);
    request.mutable_stopping()->set_max_new_tokens(max_new_tokens);
    request.mutable_stopping()->set_ignore_eos(true);
    return request;
  }

  std::vector<int32_t> Tokenize(const std::string& text) {
    grpc::ClientContext context;
    v1::TokenizeRequest request;
    request.set_text(text);
    v1::TokenizeResponse response;
    EXPECT_TRUE(stub_->Tokenize(&context, request, &response).ok());
    return {response.ids().begin(), response.ids().end()};
  }

  void ExpectRefused(const v1::GenerateRequest& request, const std::string& message) {
    const StreamResult result = Generate(*stub_, request);
    EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(absl::StrContains(result.status.error_message(), message))
        << result.status.error_message();
    EXPECT_TRUE(result.messages.empty());
  }
};

TEST_F(Seq2seqServerTest, ModelInfoMetricsAndTheStartUpLineDescribeBothStateParts) {
  const v1::ModelInfo info = GetModelInfo(*stub_);
  EXPECT_TRUE(info.is_seq2seq());
  EXPECT_EQ(info.architecture(), "encoder-decoder transformer, pre-norm");
  EXPECT_EQ(info.cross_attention_kind(), "abc");
  EXPECT_EQ(info.max_source_tokens(), 48u);
  EXPECT_EQ(info.decoder_start_id(), 2);
  EXPECT_GT(info.decoder_state_bytes_per_request(), 0);
  EXPECT_GT(info.cross_memory_bytes_per_request(), 0);
  EXPECT_EQ(info.decoder_state_bytes_per_request() + info.cross_memory_bytes_per_request(),
            info.state_bytes_per_request());
  EXPECT_EQ(info.cross_memories_total(), 2u);
  EXPECT_TRUE(absl::StrContains(server_->log(), "3 state slots and 2 cross memories"))
      << server_->log();
  const std::string scrape = Scrape();
  EXPECT_EQ(MetricValue(scrape, "slotserve_state_part_bytes_per_request{part=\"cross_memory\"}"),
            static_cast<double>(info.cross_memory_bytes_per_request()));
  EXPECT_TRUE(absl::StrContains(
      server_->log(), absl::StrCat(info.cross_memory_bytes_per_request(), " cross memory")))
      << server_->log();
}

TEST(Seq2seqServerFlagsTest, MoreCrossMemoriesThanSlotsStopTheServerNamingTheFlag) {
  std::string error;
  const std::unique_ptr<ServerProcess> server = ServerProcess::Start(
      {"--model=" SLOTSERVE_TINY_SEQ2SEQ_MODEL_DIR, "--max-slots=3", "--max-cross-memories=4"},
      &error);
  EXPECT_EQ(server, nullptr);
  EXPECT_TRUE(absl::StrContains(error, "--max-cross-memories must be in [0, max_slots = 3]"))
      << error;
}

TEST_F(Seq2seqServerTest, ATextSourceTranslatesAsItsTokenIdsWithEos) {
  const StreamResult text = Generate(*stub_, Translation(10));
  ASSERT_TRUE(text.status.ok()) << text.status.error_message();
  EXPECT_EQ(text.ids.size(), 10u);
  v1::GenerateRequest by_ids = Translation(10);
  for (int32_t id : Tokenize(kSource)) by_ids.mutable_source()->mutable_token_ids()->add_ids(id);
  by_ids.mutable_source()->mutable_token_ids()->add_ids(GetModelInfo(*stub_).eos_id());
  const StreamResult ids = Generate(*stub_, by_ids);
  ASSERT_TRUE(ids.status.ok()) << ids.status.error_message();
  EXPECT_EQ(ids.ids, text.ids);
  EXPECT_GT(
      MetricValue(Scrape(), "slotserve_step_duration_seconds_count{phase=\"encode\"}").value_or(0),
      1);
}

TEST_F(Seq2seqServerTest, EveryChoiceOfAForkTranslatesTheSameSource) {
  const StreamResult single = Generate(*stub_, Translation(8));
  ASSERT_TRUE(single.status.ok());
  v1::GenerateRequest forked = Translation(8);
  forked.set_n(2);
  const StreamResult both = Generate(*stub_, forked);
  ASSERT_TRUE(both.status.ok()) << both.status.error_message();
  std::map<uint32_t, std::vector<int32_t>> per_choice;
  for (const v1::GenerateResponse& message : both.messages) {
    if (!message.has_tokens()) continue;
    auto& ids = per_choice[message.tokens().choice_index()];
    ids.insert(ids.end(), message.tokens().ids().begin(), message.tokens().ids().end());
  }
  ASSERT_EQ(per_choice.size(), 2u);
  EXPECT_EQ(per_choice[0], single.ids);
  EXPECT_EQ(per_choice[1], single.ids);
  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(10)));
}

TEST_F(Seq2seqServerTest, RefusalsQuoteWhatWasSentAndTheServerGoesOn) {
  v1::GenerateRequest no_source = Translation(4);
  no_source.clear_source();
  no_source.set_text("In the beginning");
  ExpectRefused(no_source, "source must hold at least one token");
  v1::GenerateRequest too_long = Translation(4);
  for (int i = 0; i < 49; ++i) too_long.mutable_source()->mutable_token_ids()->add_ids(5);
  ExpectRefused(too_long, "source must be at most 48 tokens, got 49");
  v1::GenerateRequest outside = Translation(4);
  outside.mutable_source()->mutable_token_ids()->add_ids(400);
  ExpectRefused(outside, "source.token_ids.ids[0] must be a token id in [0, 400), got 400");
  EXPECT_TRUE(Generate(*stub_, Translation(4)).status.ok());
  EXPECT_TRUE(PoolIsFull());
}

TEST_F(Seq2seqServerTest, HttpCompletionsTakeASourceAndRefuseItsAbsence) {
  grpc::ClientContext context;
  v1::CompleteResponse whole;
  ASSERT_TRUE(stub_->Complete(&context, Translation(6), &whole).ok());
  const HttpResult http =
      PostJson(server_->http_port(), "/v1/completions",
               {{"source", kSource}, {"max_tokens", 6}, {"temperature", 0}, {"ignore_eos", true}});
  ASSERT_EQ(http.status, 200) << http.body;
  EXPECT_EQ(http.json["choices"][0]["text"], whole.text());
  const HttpResult missing =
      PostJson(server_->http_port(), "/v1/completions", {{"prompt", "In the beginning"}});
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(missing.json["error"]["param"], "source") << missing.body;
  const HttpResult chat = PostJson(server_->http_port(), "/v1/chat/completions",
                                   {{"messages", {{{"role", "user"}, {"content", "hi"}}}}});
  EXPECT_EQ(chat.status, 400);
  EXPECT_EQ(chat.json["error"]["param"], "messages") << chat.body;
}

TEST_F(Seq2seqServerTest, CliTranslateStreamsWhatCompleteReturns) {
  const CommandResult cli =
      RunCommand({CliBinary(), "--server=" + server_->address(), "translate", "--source", kSource,
                  "--temperature=0", "--ignore-eos", "--max-new-tokens=12"});
  ASSERT_EQ(cli.exit_status, 0) << cli.err;
  grpc::ClientContext context;
  v1::CompleteResponse whole;
  ASSERT_TRUE(stub_->Complete(&context, Translation(12), &whole).ok());
  EXPECT_EQ(cli.out, whole.text());
  const CommandResult info = RunCommand({CliBinary(), "--server=" + server_->address(), "info"});
  EXPECT_TRUE(absl::StrContains(info.out, "cross attention abc, sources <= 48 tokens")) << info.out;
}

}  // namespace
}  // namespace slotserve::testing
