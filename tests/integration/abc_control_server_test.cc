// ABC's memory controls through the real server (docs/ABC_CONTROLS.md): the golden linformer
// and window models are served over gRPC, ModelInfo names the control and its bound, greedy
// tokens equal the argmax of the PyTorch reference's logits (golden_logits.f32, computed
// independently of the engine), and a prompt past linformer's columns is refused by name while
// the server keeps serving.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include "tests/integration/golden_tokens.h"
#include "tests/integration/server_process.h"
#include "tests/integration/server_test.h"
#include "tests/integration/test_client.h"

namespace slotserve::testing {
namespace {

class AbcControlServerTest : public ServerTest {
 protected:
  void Serve(const std::string& variant) {
    dir_ = std::filesystem::path(SLOTSERVE_GOLDEN_MODELS_DIR) / variant;
    golden_ = LoadGolden(dir_);
    StartServer({"--model=" + dir_.string(), "--max-slots=3"});
  }

  // Greedy next token after tokens[0..length) as the server computes it.
  StreamResult NextToken(size_t length) {
    const std::vector<int32_t> prompt(golden_.tokens.begin(), golden_.tokens.begin() + length);
    return Generate(*stub_, SessionTurn(prompt, /*keep=*/false, /*handle=*/"", 1));
  }

  std::filesystem::path dir_;
  Golden golden_;
};

TEST_F(AbcControlServerTest, LinformerIsServedAndRefusesPromptsPastItsColumns) {
  ASSERT_NO_FATAL_FAILURE(Serve("abc_linformer"));
  const v1::ModelInfo info = GetModelInfo(*stub_);
  EXPECT_EQ(info.attention_kind(), "abc");
  EXPECT_EQ(info.attention_control(), "linformer");
  EXPECT_EQ(info.attention_control_activation(), "");
  EXPECT_NE(server_->log().find("linformer control over 64 positions"), std::string::npos)
      << server_->log();
  for (size_t length : {1u, 9u, 25u, 40u}) {
    const StreamResult result = NextToken(length);
    ASSERT_TRUE(result.status.ok()) << result.status.error_message();
    ASSERT_EQ(result.ids.size(), 1u);
    EXPECT_EQ(result.ids[0], Argmax(golden_, length - 1)) << "after " << length << " tokens";
  }
  const std::vector<int32_t> too_long(65, 5);
  const StreamResult refused = Generate(*stub_, SessionTurn(too_long, false, "", 1));
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.status.error_message().find(
                "prompt must be at most 64 tokens (the model's longest context), got 65"),
            std::string::npos)
      << refused.status.error_message();
  EXPECT_TRUE(NextToken(3).status.ok());  // still serving
  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(10)));
}

TEST_F(AbcControlServerTest, WindowAndReluControlsMatchTheReferenceThroughTheServer) {
  for (const std::string variant : {"abc_window", "abc_relu"}) {
    SCOPED_TRACE(variant);
    ASSERT_NO_FATAL_FAILURE(Serve(variant));
    const v1::ModelInfo info = GetModelInfo(*stub_);
    const bool window = variant == "abc_window";
    EXPECT_EQ(info.attention_control(), window ? "window" : "learned");
    EXPECT_EQ(info.attention_control_activation(), window ? "" : "relu");
    for (size_t length : {2u, 12u, 39u}) {  // the window's ring has wrapped by 12 and 39
      const StreamResult result = NextToken(length);
      ASSERT_TRUE(result.status.ok()) << result.status.error_message();
      ASSERT_EQ(result.ids.size(), 1u);
      EXPECT_EQ(result.ids[0], Argmax(golden_, length - 1)) << "after " << length << " tokens";
    }
    server_->Terminate();
    server_->WaitForExit(absl::Seconds(20));
  }
}

}  // namespace
}  // namespace slotserve::testing
