// --kv-cache-dtype through the real server over gRPC. With f16, the golden softmax model's
// greedy tokens and logprobs follow the PyTorch reference of an f16 cache
// (golden_logits_f16_kv_cache.f32, computed independently of the engine), the model reports
// half the state per request, and a session exported there is refused by an f32 server with
// the reason (and imports into another f16 server). A model without a KV cache, and a dtype
// that does not exist, stop the server at start naming what was wrong.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include "absl/strings/match.h"
#include "tests/integration/golden_choices.h"
#include "tests/integration/golden_tokens.h"
#include "tests/integration/server_process.h"
#include "tests/integration/server_test.h"
#include "tests/integration/test_client.h"

namespace slotserve::testing {
namespace {

// Tighter than the golden logits' 1e-4: the greedy tokens' logprobs of the two caches are only
// 1.9e-4 apart on this sequence, and the engine lands within ~1e-5 of each reference.
constexpr double kCacheLogprobTolerance = 3e-5;

const std::filesystem::path kSoftmax =
    std::filesystem::path(SLOTSERVE_GOLDEN_MODELS_DIR) / "softmax";

std::unique_ptr<v1::SlotServe::Stub> StubOf(ServerProcess& server) {
  return v1::SlotServe::NewStub(server.ConnectedChannel());
}

class KvCacheDtypeServerTest : public ServerTest {};

TEST_F(KvCacheDtypeServerTest, F16FollowsItsReferenceAndHalvesTheState) {
  const Golden halves = LoadGolden(kSoftmax, "golden_logits_f16_kv_cache.f32");
  const Golden floats = LoadGolden(kSoftmax);

  StartServer({"--model=" + kSoftmax.string(), "--max-slots=2"});
  const std::vector<GreedyChoice> f32_choices = GreedyChoices(*stub_, floats);
  ExpectReferenceChoices(f32_choices, floats, kCacheLogprobTolerance,
                         "--kv-cache-dtype f32 (default)");
  const int64_t f32_state_bytes = GetModelInfo(*stub_).state_bytes_per_request();
  server_.reset();

  StartServer({"--model=" + kSoftmax.string(), "--max-slots=2", "--kv-cache-dtype=f16"});
  const std::vector<GreedyChoice> f16_choices = GreedyChoices(*stub_, halves);
  ExpectReferenceChoices(f16_choices, halves, kCacheLogprobTolerance, "--kv-cache-dtype f16");
  EXPECT_EQ(GetModelInfo(*stub_).state_bytes_per_request() * 2, f32_state_bytes);
  EXPECT_GT(LargestLogprobDifference(f16_choices, f32_choices), 3 * kCacheLogprobTolerance)
      << "the dtype changed no logprob";
}

TEST_F(KvCacheDtypeServerTest, SessionsMoveOnlyBetweenServersOfTheSameDtype) {
  StartServer({"--model=" + kSoftmax.string(), "--max-slots=2", "--kv-cache-dtype=f16"});
  std::string error;
  const std::unique_ptr<ServerProcess> f32_server =
      ServerProcess::Start({"--model=" + kSoftmax.string(), "--max-slots=2"}, &error);
  ASSERT_NE(f32_server, nullptr) << error;
  const std::unique_ptr<ServerProcess> f16_server = ServerProcess::Start(
      {"--model=" + kSoftmax.string(), "--max-slots=2", "--kv-cache-dtype=f16"}, &error);
  ASSERT_NE(f16_server, nullptr) << error;

  const StreamResult first = Generate(*stub_, SessionTurn({1, 5, 9, 13, 17}, true, "", 4));
  ASSERT_TRUE(first.status.ok()) << first.status.error_message();
  std::string blob;
  ASSERT_TRUE(ExportSession(*stub_, first.finished->session_handle(), &blob).ok());

  std::string handle;
  const grpc::Status refused = ImportSession(*StubOf(*f32_server), blob, &handle);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(
      refused.error_message(), "state dtype must be 0 (f32) for this server, got 1 (f16 KV cache)"))
      << refused.error_message();

  const std::unique_ptr<v1::SlotServe::Stub> twin = StubOf(*f16_server);
  const grpc::Status imported = ImportSession(*twin, blob, &handle);
  ASSERT_TRUE(imported.ok()) << imported.error_message();
  const StreamResult there = Generate(*twin, SessionTurn({20, 24}, false, handle, 6));
  const StreamResult here =
      Generate(*stub_, SessionTurn({20, 24}, false, first.finished->session_handle(), 6));
  ASSERT_TRUE(there.status.ok() && here.status.ok());
  EXPECT_EQ(there.ids, here.ids);
}

TEST(KvCacheDtypeFlagTest, ModelsWithoutAKvCacheAndUnknownDtypesStopTheServer) {
  std::string error;
  const std::filesystem::path abc = std::filesystem::path(SLOTSERVE_GOLDEN_MODELS_DIR) / "abc";
  EXPECT_EQ(ServerProcess::Start({"--model=" + abc.string(), "--kv-cache-dtype=f16"}, &error),
            nullptr);
  EXPECT_TRUE(absl::StrContains(
      error, "only softmax attention keeps a KV cache; this model's attention is abc"))
      << error;
  EXPECT_EQ(ServerProcess::Start({"--model=" + kSoftmax.string(), "--kv-cache-dtype=fp8"}, &error),
            nullptr);
  EXPECT_TRUE(absl::StrContains(error, "--kv-cache-dtype must be f32 or f16, got \"fp8\""))
      << error;
}

}  // namespace
}  // namespace slotserve::testing
