// Softmax pooling (the abc and luna cross-memory build): both ways of getting the logits on
// each optimised backend against the reference, and closed forms for the reference.
#include "kernels/softmax_pooling.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

constexpr int kHeads = 2;
constexpr int kHeadDim = 6;
constexpr int kWidth = kHeads * kHeadDim;
constexpr int kMemoryRows = 3;
constexpr int64_t kInStride = 2 * kWidth + 1;  // keys, then values, then padding
constexpr int64_t kLogitsStride = kHeads * kMemoryRows + 2;

struct PoolingInput {
  int positions;
  std::vector<float> key_values;  // [positions x kInStride]
  std::vector<float> logits;      // [positions x kLogitsStride]
  std::vector<float> queries;     // [kMemoryRows x kWidth]
};

PoolingInput RandomInput(int positions, uint32_t seed) {
  return {positions, RandomFloats(positions * kInStride, seed, -2.0f, 2.0f),
          RandomFloats(positions * kLogitsStride, seed + 1, -3.0f, 3.0f),
          RandomFloats(kMemoryRows * kWidth, seed + 2)};
}

// Pooled keys then pooled values, [kMemoryRows x kWidth] each.
std::vector<float> RunPooling(Backend backend, const PoolingInput& input, bool from_queries,
                              float logit_scale) {
  DeviceArray<float> key_values(backend, input.key_values);
  DeviceArray<float> logits(backend, input.logits);
  DeviceArray<float> queries(backend, input.queries);
  DeviceArray<float> out(backend, std::vector<float>(2 * kMemoryRows * kWidth, -9.0f));
  SoftmaxPoolingParams p;
  p.positions = input.positions;
  p.heads = kHeads;
  p.head_dim = kHeadDim;
  p.memory_rows = kMemoryRows;
  if (from_queries) {
    p.queries = queries.data();
  } else {
    p.logits = logits.data();
    p.logits_stride = kLogitsStride;
  }
  p.logit_scale = logit_scale;
  p.keys = key_values.data();
  p.values = key_values.data() + kWidth;
  p.in_stride = kInStride;
  p.out_keys = out.data();
  p.out_values = out.data() + kMemoryRows * kWidth;
  LaunchSoftmaxPooling(backend, p);
  return out.Download();
}

class SoftmaxPoolingTest : public ::testing::TestWithParam<BackendCase> {};

TEST_P(SoftmaxPoolingTest, MatchesTheReference) {
  SLOTSERVE_SKIP_IF_UNAVAILABLE(GetParam().backend);
  for (int positions : {1, 5, 33}) {
    const PoolingInput input = RandomInput(positions, 30 + positions);
    for (bool from_queries : {false, true}) {
      const float scale = from_queries ? 0.7f : 1.0f;
      ExpectAllClose(RunPooling(GetParam().backend, input, from_queries, scale),
                     RunPooling(Backend::kReference, input, from_queries, scale),
                     GetParam().tolerance,
                     std::string(from_queries ? "queries" : "logits") + ", positions " +
                         std::to_string(positions));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, SoftmaxPoolingTest, ::testing::ValuesIn(F32Cases()),
                         [](const auto& info) { return CaseName(info.param); });

// Equal logits weigh every position alike: each memory row is the mean of the rows.
TEST(SoftmaxPoolingReferenceTest, EqualLogitsGiveTheMean) {
  PoolingInput input = RandomInput(4, 7);
  for (float& logit : input.logits) logit = 1.5f;
  const std::vector<float> out = RunPooling(Backend::kReference, input, false, 1.0f);
  for (int j = 0; j < kMemoryRows; ++j) {
    for (int c = 0; c < kWidth; ++c) {
      float key_mean = 0.0f;
      float value_mean = 0.0f;
      for (int i = 0; i < 4; ++i) {
        key_mean += input.key_values[i * kInStride + c] / 4;
        value_mean += input.key_values[i * kInStride + kWidth + c] / 4;
      }
      EXPECT_NEAR(out[j * kWidth + c], key_mean, 1e-6f);
      EXPECT_NEAR(out[(kMemoryRows + j) * kWidth + c], value_mean, 1e-6f);
    }
  }
}

// A dominant logit picks its position: head 0's row 1 has a huge logit at position 2.
TEST(SoftmaxPoolingReferenceTest, ADominantLogitPicksItsPosition) {
  PoolingInput input = RandomInput(4, 8);
  input.logits[2 * kLogitsStride + 0 * kMemoryRows + 1] = 1000.0f;
  const std::vector<float> out = RunPooling(Backend::kReference, input, false, 1.0f);
  for (int c = 0; c < kHeadDim; ++c) {
    EXPECT_NEAR(out[1 * kWidth + c], input.key_values[2 * kInStride + c], 1e-6f);
  }
}

}  // namespace
}  // namespace slotserve::kernels::testing
