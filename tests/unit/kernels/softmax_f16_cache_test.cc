// The softmax f16 KV cache (SoftmaxAttentionParams::f16_cache) beyond what attention_test.cc
// checks for every variant (each backend against the reference, prefill/step/chunk/batch
// properties): the cache holds exactly the halves nearest the keys and values, in the fp32
// cache's layout at half the size, and attention over it stays within half-precision rounding
// of the fp32 cache's.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/float16.h"
#include "kernels/softmax_attention.h"
#include "tests/unit/kernels/attention_harness.h"
#include "tests/unit/kernels/test_backends.h"

namespace slotserve::kernels::testing {
namespace {

constexpr int kHeads = 2;
constexpr int kHeadDim = 45;  // 5 x 8 + 5: the vector loops and their scalar tails
constexpr int kContext = 24;
constexpr int kTokens = 17;

AttentionVariant Softmax(bool f16_cache) {
  AttentionVariant v{f16_cache ? "softmax_f16" : "softmax_f32", AttentionKind::kSoftmax, kHeads,
                     kHeadDim, kContext};
  v.softmax_f16_cache = f16_cache;
  return v;
}

// The arena's floats as the halves they pack (little-endian: the first half is the low 16 bits).
std::vector<uint16_t> AsHalves(const std::vector<float>& floats) {
  std::vector<uint16_t> halves(floats.size() * 2);
  std::memcpy(halves.data(), floats.data(), floats.size() * sizeof(float));
  return halves;
}

class SoftmaxF16CacheTest : public ::testing::TestWithParam<Backend> {};

TEST(SoftmaxF16CacheSize, HalfTheFp32Cache) {
  EXPECT_EQ(SoftmaxCacheFloatsPerLayer(3, 5, 40, /*f16_cache=*/true) * 2,
            SoftmaxCacheFloatsPerLayer(3, 5, 40, /*f16_cache=*/false));
  EXPECT_EQ(SoftmaxCacheFloatsPerLayer(3, 5, 40, false), SoftmaxStateFloatsPerLayer(3, 5, 40));
}

TEST_P(SoftmaxF16CacheTest, CacheHoldsTheNearestHalves) {
  const Backend backend = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(backend);
  const AttentionLayer layer(Softmax(true), backend);
  TestArena arena(backend, 2, StateFloatsPerLayer(layer.variant()));
  const std::vector<float> inputs = layer.RandomInputs(kTokens, 31);
  // Prefill 9 tokens, then step the rest one by one: both writers.
  RunPrefill(layer, arena, inputs, 0, 9, 1, 0);
  for (int t = 9; t < kTokens; ++t) {
    const std::vector<float> row(inputs.begin() + t * layer.in_stride(),
                                 inputs.begin() + (t + 1) * layer.in_stride());
    RunStep(layer, arena, row, {1}, {t});
  }
  const std::vector<uint16_t> cache = AsHalves(arena.LayerState(1));
  const int width = kHeads * kHeadDim;
  const int64_t values_at = int64_t{kContext} * width;  // halves from K's start to V's
  for (int t = 0; t < kTokens; ++t) {
    for (int c = 0; c < width; ++c) {
      const float key = inputs[t * layer.in_stride() + width + c];
      const float value = inputs[t * layer.in_stride() + 2 * width + c];
      ASSERT_EQ(cache[t * width + c], FloatToHalf(key)) << "key of token " << t << " col " << c;
      ASSERT_EQ(cache[values_at + t * width + c], FloatToHalf(value))
          << "value of token " << t << " col " << c;
    }
  }
  for (int64_t i = kTokens * width; i < values_at; ++i) ASSERT_EQ(cache[i], 0) << "key row " << i;
}

TEST_P(SoftmaxF16CacheTest, WithinHalfRoundingOfTheFp32Cache) {
  const Backend backend = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(backend);
  const AttentionLayer halves(Softmax(true), backend);
  const AttentionLayer floats(Softmax(false), backend);
  TestArena half_arena(backend, 2, StateFloatsPerLayer(halves.variant()));
  TestArena float_arena(backend, 2, StateFloatsPerLayer(floats.variant()));
  const std::vector<float> inputs = halves.RandomInputs(kTokens, 47);
  const std::vector<float> got = RunPrefill(halves, half_arena, inputs, 0, kTokens, 0, 0);
  const std::vector<float> want = RunPrefill(floats, float_arena, inputs, 0, kTokens, 0, 0);
  ASSERT_EQ(got.size(), want.size());
  // Keys and values in [-1.5, 1.5] move by at most 2^-11 relative; with |q| <= 1.5 and d = 45
  // a score moves by < 45 x 1.5 x 1.5 x 2^-11 / sqrt(45) ~ 7e-3, and an output (a convex mix
  // of values) by about as much times its values' spread: 0.03 bounds both with room.
  double largest = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double difference = std::fabs(static_cast<double>(got[i]) - want[i]);
    ASSERT_LE(difference, 0.03) << "output " << i << ": " << got[i] << " vs fp32 cache " << want[i];
    largest = std::max(largest, difference);
  }
  // And the halves were really used: some output moved.
  EXPECT_GT(largest, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Backends, SoftmaxF16CacheTest, ::testing::ValuesIn(AllBackends()),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return std::string(BackendName(info.param));
                         });

}  // namespace
}  // namespace slotserve::kernels::testing
