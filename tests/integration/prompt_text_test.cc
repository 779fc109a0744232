// GenerateRequest.prompt_text, the string form of the bytes `text` for JSON clients (grpcurl:
// issue 57), is the same prompt: the same tokens for the same text, and refusals naming it.
#include <gtest/gtest.h>
#include "absl/strings/match.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

class PromptTextTest : public ServerTest {};

TEST_F(PromptTextTest, PromptTextGeneratesWhatTextDoes) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const v1::GenerateRequest as_bytes = GreedyTextRequest("In the beginning", 12);
  v1::GenerateRequest as_string = as_bytes;
  as_string.set_prompt_text("In the beginning");
  ASSERT_EQ(as_string.prompt_case(), v1::GenerateRequest::kPromptText);
  const StreamResult from_bytes = Generate(*stub_, as_bytes);
  const StreamResult from_string = Generate(*stub_, as_string);
  ASSERT_TRUE(from_bytes.status.ok()) << from_bytes.status.error_message();
  ASSERT_TRUE(from_string.status.ok()) << from_string.status.error_message();
  EXPECT_EQ(from_string.ids, from_bytes.ids);
  ASSERT_EQ(from_bytes.ids.size(), 12u);
  EXPECT_EQ(from_string.finished->prompt_tokens(), from_bytes.finished->prompt_tokens());

  grpc::ClientContext context;
  v1::CompleteResponse whole;
  ASSERT_TRUE(stub_->Complete(&context, as_string, &whole).ok());
  EXPECT_EQ(std::vector<int32_t>(whole.token_ids().begin(), whole.token_ids().end()),
            from_bytes.ids);

  v1::GenerateRequest empty = as_string;
  empty.set_prompt_text("");
  const StreamResult refused = Generate(*stub_, empty);
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(refused.status.error_message(), "prompt_text must not be empty"))
      << refused.status.error_message();
}

}  // namespace
}  // namespace slotserve::testing
