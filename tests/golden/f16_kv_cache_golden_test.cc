// The engine's f16 KV cache (--kv-cache-dtype f16, models/kv_cache_dtype.h) against the PyTorch
// reference (python/slotserve_ref/f16_kv_cache.py): the softmax golden variant's logits with
// every cached key and value rounded to a half (golden_logits_f16_kv_cache.f32), on the
// reference and cpu backends, fed whole, one token per step in a shared step batch, and
// restored from a saved state.
//
// The bar is 5e-5, half golden_logits_test.cc's, so that it stays well apart from the fp32
// cache's logits (7.2e-4 away: a backend that ignored the dtype fails). The engine lands within
// 1.3e-5 here. Rounding to halves is a step function, and the engine's keys and values differ
// from float64's by ~1e-7 relative, so a value could in principle round to the neighbouring
// half and move a logit past the bar; on this sequence none does.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "models/language_model.h"
#include "tests/golden/golden_data.h"
#include "tests/golden/stepped_logits.h"

namespace slotserve::golden {
namespace {

using models::LanguageModel;
using models::LogitsWanted;

constexpr float kTolerance = 5e-5f;

class F16KvCacheGoldenTest : public ::testing::TestWithParam<kernels::Backend> {
 protected:
  void SetUp() override {
    const auto dir = GoldenModelsDir() / "softmax";
    auto golden = LoadGoldenData(dir, "golden_logits_f16_kv_cache.f32");
    ASSERT_TRUE(golden.ok()) << golden.status();
    golden_ = *std::move(golden);
    auto exact = LoadGoldenData(dir);
    ASSERT_TRUE(exact.ok()) << exact.status();
    exact_ = *std::move(exact);
    auto model =
        LanguageModel::Load(dir, GetParam(), {.kv_cache_dtype = models::KvCacheDtype::kF16});
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
    auto fp32 = LanguageModel::Load(dir, GetParam());
    ASSERT_TRUE(fp32.ok()) << fp32.status();
    fp32_state_bytes_ = (*fp32)->state_bytes_per_request();
    vocab_ = golden_.vocab_size;
    auto states = model_->AllocateStates(4);
    ASSERT_TRUE(states.ok()) << states.status();
    states_ = *std::move(states);
  }

  void ExpectGolden(std::span<const float> logits, const std::string& how) {
    const float diff = MaxAbsDiff(logits, golden_.logits);
    const float from_exact = MaxAbsDiff(logits, exact_.logits);
    std::printf(
        "[f16 kv cache] %-9s %-20s max abs diff %.3g (from the fp32 cache's logits: %.3g)\n",
        kernels::BackendName(GetParam()), how.c_str(), diff, from_exact);
    EXPECT_LE(diff, kTolerance) << how;
    // The dtype took effect: these logits are nearer the f16 reference than the fp32 one.
    EXPECT_GE(from_exact, 10 * kTolerance) << how;
  }

  GoldenData golden_;
  GoldenData exact_;
  int vocab_ = 0;
  int64_t fp32_state_bytes_ = 0;
  std::unique_ptr<LanguageModel> model_;
  std::unique_ptr<models::StateArena> states_;
};

TEST_P(F16KvCacheGoldenTest, TheTwoReferencesDiffer) {
  EXPECT_GE(MaxAbsDiff(golden_.logits, exact_.logits), 10 * kTolerance);
}

TEST_P(F16KvCacheGoldenTest, StateIsHalfTheFp32Cache) {
  EXPECT_EQ(model_->state_bytes_per_request() * 2, fp32_state_bytes_);
}

TEST_P(F16KvCacheGoldenTest, WholePrompt) {
  const absl::StatusOr<std::vector<float>> logits =
      WholePromptLogits(*model_, *states_, 1, golden_.tokens);
  ASSERT_TRUE(logits.ok()) << logits.status();
  ExpectGolden(*logits, "whole prompt");
}

TEST_P(F16KvCacheGoldenTest, OneTokenPerStepInABatch) {
  const absl::StatusOr<std::vector<float>> logits =
      SteppedInABatchLogits(*model_, *states_, golden_.tokens);
  ASSERT_TRUE(logits.ok()) << logits.status();
  ExpectGolden(*logits, "one token per step");
}

// Half the prompt, saved and restored into another slot (the bytes a session export carries),
// then the rest: the halves survive the round trip.
TEST_P(F16KvCacheGoldenTest, SavedAndRestoredHalfway) {
  const auto& tokens = golden_.tokens;
  const size_t half = tokens.size() / 2;
  std::vector<float> logits(tokens.size() * vocab_);
  ASSERT_TRUE(model_
                  ->Prefill(*states_, 0, std::span(tokens).first(half), LogitsWanted::kEveryToken,
                            std::span(logits).first(half * vocab_))
                  .ok());
  std::vector<uint8_t> saved;
  ASSERT_TRUE(states_->Save(0, &saved).ok());
  EXPECT_EQ(static_cast<int64_t>(saved.size()),
            static_cast<int64_t>(sizeof(int32_t)) + model_->state_bytes_per_request());
  ASSERT_TRUE(states_->Restore(3, saved).ok());
  ASSERT_TRUE(model_
                  ->Prefill(*states_, 3, std::span(tokens).subspan(half), LogitsWanted::kEveryToken,
                            std::span(logits).subspan(half * vocab_))
                  .ok());
  ExpectGolden(logits, "saved and restored");
}

INSTANTIATE_TEST_SUITE_P(Backends, F16KvCacheGoldenTest,
                         ::testing::Values(kernels::Backend::kReference, kernels::Backend::kCpu),
                         [](const auto& info) { return kernels::BackendName(info.param); });

}  // namespace
}  // namespace slotserve::golden
