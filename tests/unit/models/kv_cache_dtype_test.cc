// --kv-cache-dtype at the model floor (models/kv_cache_dtype.h): the flag's spelling, which
// models take f16 (softmax only; every other kind is refused by name), and what an f16 cache
// changes in a loaded model: half the state bytes, the start-up line, an arena of the fp32
// model refused, and the same tokens in and out of a slot as before (the logits against the
// PyTorch reference are in tests/golden/f16_kv_cache_golden_test.cc).
#include "models/kv_cache_dtype.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/language_model.h"
#include "tests/unit/models/test_model_dir.h"

namespace slotserve::models {
namespace {

using testing::SmallConfig;

TEST(KvCacheDtypeTest, ParsesF32AndF16AndQuotesAnythingElse) {
  EXPECT_EQ(*ParseKvCacheDtype("f32"), KvCacheDtype::kF32);
  EXPECT_EQ(*ParseKvCacheDtype("f16"), KvCacheDtype::kF16);
  for (const char* bad : {"fp16", "F16", "", "bf16"}) {
    const absl::StatusOr<KvCacheDtype> parsed = ParseKvCacheDtype(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().message(), std::string("must be f32 or f16, got \"") + bad + "\"");
  }
  EXPECT_STREQ(KvCacheDtypeName(KvCacheDtype::kF16), "f16");
}

TEST(KvCacheDtypeTest, KindsWithoutAKvCacheRefuseF16ByName) {
  for (const char* kind : {"abc", "rfa", "luna"}) {
    testing::TempDir dir;
    testing::WriteModelDir(dir.path(), SmallConfig(kind));
    const auto model = LanguageModel::Load(dir.path(), kernels::Backend::kCpu,
                                           {.kv_cache_dtype = KvCacheDtype::kF16});
    ASSERT_FALSE(model.ok()) << kind;
    EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(
        model.status().message().find(
            std::string("only softmax attention keeps a KV cache; this model's attention is ") +
            kind),
        std::string::npos)
        << model.status();
    // f32 is every model's state as it is.
    EXPECT_TRUE(LanguageModel::Load(dir.path(), kernels::Backend::kCpu,
                                    {.kv_cache_dtype = KvCacheDtype::kF32})
                    .ok())
        << kind;
  }
}

class SoftmaxF16CacheModelTest : public ::testing::TestWithParam<kernels::Backend> {
 protected:
  void SetUp() override {
    testing::WriteModelDir(dir_.path(), SmallConfig("softmax"));
    auto halves =
        LanguageModel::Load(dir_.path(), GetParam(), {.kv_cache_dtype = KvCacheDtype::kF16});
    ASSERT_TRUE(halves.ok()) << halves.status();
    halves_ = *std::move(halves);
    auto floats = LanguageModel::Load(dir_.path(), GetParam());
    ASSERT_TRUE(floats.ok()) << floats.status();
    floats_ = *std::move(floats);
  }

  testing::TempDir dir_;
  std::unique_ptr<LanguageModel> halves_;
  std::unique_ptr<LanguageModel> floats_;
};

TEST_P(SoftmaxF16CacheModelTest, HalfTheStateAndSaysSo) {
  EXPECT_EQ(halves_->state_bytes_per_request() * 2, floats_->state_bytes_per_request());
  EXPECT_NE(DescribeServedAttention(*halves_).find(", f16 KV cache"), std::string::npos)
      << DescribeServedAttention(*halves_);
  EXPECT_EQ(DescribeServedAttention(*floats_).find("f16"), std::string::npos);
  EXPECT_EQ(StateDtypeCode(halves_->config()), 1u);
  EXPECT_EQ(StateDtypeCode(floats_->config()), 0u);
}

TEST_P(SoftmaxF16CacheModelTest, RefusesTheFp32ModelsArena) {
  auto arena = floats_->AllocateStates(2);
  ASSERT_TRUE(arena.ok());
  std::vector<float> logits(halves_->config().vocab_size);
  const absl::Status status =
      halves_->Prefill(**arena, 0, std::vector<int32_t>{1, 2}, LogitsWanted::kLastToken, logits);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
}

TEST_P(SoftmaxF16CacheModelTest, LogitsStayNearTheFp32Caches) {
  auto half_arena = halves_->AllocateStates(1);
  auto float_arena = floats_->AllocateStates(1);
  ASSERT_TRUE(half_arena.ok() && float_arena.ok());
  const std::vector<int32_t> tokens = {1, 7, 3, 19, 22, 5, 11, 30, 2, 9};
  const size_t vocab = halves_->config().vocab_size;
  std::vector<float> got(tokens.size() * vocab);
  std::vector<float> want(tokens.size() * vocab);
  ASSERT_TRUE(halves_->Prefill(**half_arena, 0, tokens, LogitsWanted::kEveryToken, got).ok());
  ASSERT_TRUE(floats_->Prefill(**float_arena, 0, tokens, LogitsWanted::kEveryToken, want).ok());
  float largest = 0.0f;
  for (size_t i = 0; i < got.size(); ++i) largest = std::max(largest, std::abs(got[i] - want[i]));
  EXPECT_LT(largest, 1e-2f);  // halves keep 11 significant bits of every key and value
  EXPECT_GT(largest, 0.0f);   // and are really used
}

INSTANTIATE_TEST_SUITE_P(Backends, SoftmaxF16CacheModelTest,
                         ::testing::Values(kernels::Backend::kReference, kernels::Backend::kCpu),
                         [](const auto& info) { return kernels::BackendName(info.param); });

}  // namespace
}  // namespace slotserve::models
