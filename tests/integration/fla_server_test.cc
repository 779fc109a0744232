// flash-linear-attention checkpoints served as stored (docs/FLA_CHECKPOINTS.md) through the
// real server over gRPC: the golden GSA checkpoint with grouped kv heads, short convolutions and
// three shards, and the golden ABC checkpoint with RoPE and clamped slot logits. ModelInfo and
// the start-up line name fla's model type, the state bytes per request are the ones
// docs/FLA_CHECKPOINTS.md §4's table gives for these shapes (computed here by hand), and greedy
// tokens equal the argmax of the float64 reference's logits (golden_logits.f32, computed
// independently of the engine), alone and with several requests decoding at once.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include "tests/integration/golden_tokens.h"
#include "tests/integration/server_process.h"
#include "tests/integration/server_test.h"
#include "tests/integration/test_client.h"

namespace slotserve::testing {
namespace {

class FlaServerTest : public ServerTest {
 protected:
  void Serve(const std::string& variant) {
    dir_ = std::filesystem::path(SLOTSERVE_GOLDEN_FLA_DIR) / variant;
    golden_ = LoadGolden(dir_);
    StartServer({"--model=" + dir_.string(), "--max-slots=4"});
  }

  // Greedy next token after tokens[0..length) as the server computes it.
  StreamResult NextToken(const std::shared_ptr<grpc::Channel>& channel, size_t length) {
    const std::vector<int32_t> prompt(golden_.tokens.begin(), golden_.tokens.begin() + length);
    auto stub = v1::SlotServe::NewStub(channel);
    return Generate(*stub, SessionTurn(prompt, /*keep=*/false, /*handle=*/"", 1));
  }

  void ExpectReferenceTokens(const std::vector<size_t>& lengths) {
    for (size_t length : lengths) {
      const StreamResult result = NextToken(channel_, length);
      ASSERT_TRUE(result.status.ok()) << result.status.error_message();
      ASSERT_EQ(result.ids.size(), 1u);
      EXPECT_EQ(result.ids[0], Argmax(golden_, length - 1)) << "after " << length << " tokens";
    }
  }

  std::filesystem::path dir_;
  Golden golden_;
};

TEST_F(FlaServerTest, ShardedGsaWithGroupedHeadsAndShortConvsIsServed) {
  ASSERT_NO_FATAL_FAILURE(Serve("gsa_conv_gqa_sharded"));
  const v1::ModelInfo info = GetModelInfo(*stub_);
  EXPECT_EQ(info.attention_kind(), "gsa");
  EXPECT_NE(info.architecture().find("flash-linear-attention gsa"), std::string::npos)
      << info.architecture();
  EXPECT_EQ(info.attention_memory_size(), 8u);
  EXPECT_EQ(info.n_layers(), 2u);
  // Per layer: 2 kv heads x (hk [dk 8, M 8] + hv [M 8, dv 16]) = 384 floats, plus the conv
  // windows 3 x (32 + 16 + 32) = 240 floats; 2 layers of 624 floats, 4 bytes each.
  EXPECT_EQ(info.state_bytes_per_request(), 2u * 624u * 4u);
  EXPECT_NE(server_->log().find("fla gsa, 8 slots, 4 heads over 2 kv heads"), std::string::npos)
      << server_->log();
  ASSERT_NO_FATAL_FAILURE(ExpectReferenceTokens({1, 2, 5, 17, 40}));
}

TEST_F(FlaServerTest, AbcWithRopeAndClampMatchesTheReferenceWithRequestsInParallel) {
  ASSERT_NO_FATAL_FAILURE(Serve("abc_rope_clamp"));
  const v1::ModelInfo info = GetModelInfo(*stub_);
  EXPECT_EQ(info.attention_kind(), "abc");
  EXPECT_EQ(info.attention_control(), "");  // our format's controls do not apply
  // Per layer: 2 heads x (K~ [8, 16] + V~ [8, 32] + z [8] + m [8]) = 800 floats; 2 layers.
  EXPECT_EQ(info.state_bytes_per_request(), 2u * 800u * 4u);
  // Four requests at once, each at its own length (RoPE positions differ per request).
  const std::vector<size_t> lengths = {3, 11, 26, 39};
  std::vector<std::future<StreamResult>> results;
  for (size_t length : lengths) {
    results.push_back(
        std::async(std::launch::async, [this, length] { return NextToken(channel_, length); }));
  }
  for (size_t i = 0; i < lengths.size(); ++i) {
    const StreamResult result = results[i].get();
    ASSERT_TRUE(result.status.ok()) << result.status.error_message();
    ASSERT_EQ(result.ids.size(), 1u);
    EXPECT_EQ(result.ids[0], Argmax(golden_, lengths[i] - 1)) << "after " << lengths[i];
  }
  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(); }, absl::Seconds(10)));
}

}  // namespace
}  // namespace slotserve::testing
