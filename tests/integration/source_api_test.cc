// The encoder-decoder API (GenerateRequest.source, ModelInfo's seq2seq fields, the state-part
// metrics, slotserve-cli translate) against a real server running a decoder-only model:
// a source is refused quoting what was sent while other requests are served as before, the
// model reports itself as not seq2seq, and the metrics give its whole state to the decoder.
// (The seq2seq side runs over a scripted model in tests/unit/engine/seq2seq_scheduler_test.cc
// until a seq2seq model loads here.)
#include <gtest/gtest.h>
#include "absl/strings/match.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

class SourceApiTest : public ServerTest {
 protected:
  void SetUp() override { StartServer({"--max-slots=2"}); }

  CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {CliBinary(), "--server=" + server_->address()});
    return RunCommand(args);
  }
};

TEST_F(SourceApiTest, ADecoderOnlyModelRefusesASourceAndServesOthersUnchanged) {
  const v1::GenerateRequest plain = GreedyTextRequest("In the beginning", 8);
  const StreamResult before = Generate(*stub_, plain);
  ASSERT_TRUE(before.status.ok()) << before.status.error_message();

  v1::GenerateRequest with_ids = plain;
  with_ids.mutable_source()->mutable_token_ids()->add_ids(5);
  with_ids.mutable_source()->mutable_token_ids()->add_ids(6);
  const StreamResult refused = Generate(*stub_, with_ids);
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(refused.status.error_message(),
            "source is only for encoder-decoder models; this model is decoder-only, got a "
            "source of 2 tokens");
  EXPECT_TRUE(refused.messages.empty());

  // A text source is tokenised and ends with eos: its length counts that token.
  v1::GenerateRequest with_text = plain;
  with_text.mutable_source()->set_text("Hello");
  const StreamResult text_refused = Generate(*stub_, with_text);
  EXPECT_EQ(text_refused.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(text_refused.status.error_message(), "decoder-only"))
      << text_refused.status.error_message();

  v1::GenerateRequest empty_source = plain;
  empty_source.mutable_source()->mutable_token_ids();
  EXPECT_EQ(Generate(*stub_, empty_source).status.error_message(),
            "source.token_ids.ids must not be empty");

  // The same request without a source is served exactly as before.
  const StreamResult after = Generate(*stub_, plain);
  ASSERT_TRUE(after.status.ok());
  EXPECT_EQ(after.ids, before.ids);
  EXPECT_EQ(GetModelInfo(*stub_).slots_free(), 2u);
}

TEST_F(SourceApiTest, ModelInfoAndMetricsDescribeADecoderOnlyModel) {
  const v1::ModelInfo info = GetModelInfo(*stub_);
  EXPECT_FALSE(info.is_seq2seq());
  EXPECT_EQ(info.architecture(), "decoder-only transformer, pre-norm");
  EXPECT_EQ(info.cross_attention_kind(), "");
  EXPECT_EQ(info.max_source_tokens(), 0u);
  EXPECT_EQ(info.cross_memory_bytes_per_request(), 0);
  const std::string scrape = Scrape();
  EXPECT_EQ(MetricValue(scrape, "slotserve_state_part_bytes_per_request{part=\"decoder_self\"}"),
            static_cast<double>(info.state_bytes_per_request()));
  EXPECT_EQ(MetricValue(scrape, "slotserve_state_part_bytes_per_request{part=\"cross_memory\"}"),
            0.0);
  EXPECT_EQ(MetricValue(scrape, "slotserve_step_duration_seconds_count{phase=\"encode\"}"), 0.0);
}

TEST_F(SourceApiTest, CliTranslateNeedsASourceAndReportsTheServersRefusal) {
  const CommandResult no_source = Cli({"translate", "--max-new-tokens=4"});
  EXPECT_EQ(no_source.exit_status, 2);
  EXPECT_TRUE(absl::StrContains(no_source.err, "translate needs --source or --source-ids"))
      << no_source.err;

  const CommandResult both = Cli({"translate", "--source=Hi", "--source-ids=3,4"});
  EXPECT_EQ(both.exit_status, 2);
  EXPECT_TRUE(absl::StrContains(both.err, "either --source or --source-ids")) << both.err;

  const CommandResult refused = Cli({"translate", "--source-ids=3,4,5", "--max-new-tokens=4"});
  EXPECT_EQ(refused.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(refused.err, "got a source of 3 tokens")) << refused.err;

  const CommandResult info = Cli({"info"});
  ASSERT_EQ(info.exit_status, 0) << info.err;
  EXPECT_FALSE(absl::StrContains(info.out, "encoder-decoder")) << info.out;
}

}  // namespace
}  // namespace slotserve::testing
