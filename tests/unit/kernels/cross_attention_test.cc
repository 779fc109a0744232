// The encoder–decoder's row attentions: attention over a slot's memory rows (decode-time
// cross attention) and the encoder's unmasked attention, each optimised backend against the
// reference, plus closed forms the reference must meet on its own.
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/bidirectional_attention.h"
#include "kernels/memory_attention.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

constexpr int kHeads = 3;
constexpr int kHeadDim = 5;
constexpr int kWidth = kHeads * kHeadDim;
constexpr int kCapacity = 7;
constexpr int kSlots = 3;
constexpr int64_t kLayerOffset = 4;  // the slot's first floats hold other things (the length)
constexpr int64_t kLengthOffset = 1;
constexpr int64_t kSlotStride = kLayerOffset + 2 * kCapacity * kWidth + 3;

// A pool of kSlots slots whose memories hold random rows, and whose stored lengths are 7, 1, 4.
std::vector<float> MemoryPool() {
  std::vector<float> pool = RandomFloats(kSlots * kSlotStride, 11, -2.0f, 2.0f);
  const float lengths[kSlots] = {7, 1, 4};
  for (int slot = 0; slot < kSlots; ++slot)
    pool[slot * kSlotStride + kLengthOffset] = lengths[slot];
  return pool;
}

std::vector<float> RunMemoryAttention(Backend backend, const std::vector<float>& pool,
                                      const std::vector<int32_t>& slots, bool stored_length) {
  const int rows = static_cast<int>(slots.size());
  const int64_t q_stride = kWidth + 2;
  const int64_t out_stride = kWidth + 1;
  DeviceArray<float> pool_dev(backend, pool);
  DeviceArray<int32_t> slots_dev(backend, slots);
  DeviceArray<float> q_dev(backend, RandomFloats(rows * q_stride, 12));
  DeviceArray<float> out_dev(backend, std::vector<float>(rows * out_stride, -9.0f));
  MemoryAttentionParams p;
  p.rows = rows;
  p.heads = kHeads;
  p.head_dim = kHeadDim;
  p.capacity = kCapacity;
  p.length_offset = stored_length ? kLengthOffset : -1;
  p.q = q_dev.data();
  p.q_stride = q_stride;
  p.out = out_dev.data();
  p.out_stride = out_stride;
  StepTarget target;
  target.state = {pool_dev.data(), kSlotStride, kLayerOffset};
  target.slots = slots_dev.data();
  LaunchMemoryAttention(backend, p, target);
  std::vector<float> out = out_dev.Download();
  EXPECT_EQ(pool_dev.Download(), pool) << "the memory must only be read";
  return out;
}

std::vector<float> RunBidirectionalAttention(Backend backend, int rows,
                                             const std::vector<float>& qkv) {
  const int64_t in_stride = 3 * kWidth + 1;
  const int64_t out_stride = kWidth + 2;
  DeviceArray<float> qkv_dev(backend, qkv);
  DeviceArray<float> out_dev(backend, std::vector<float>(rows * out_stride, -9.0f));
  BidirectionalAttentionParams p;
  p.rows = rows;
  p.heads = kHeads;
  p.head_dim = kHeadDim;
  p.q = qkv_dev.data();
  p.k = qkv_dev.data() + kWidth;
  p.v = qkv_dev.data() + 2 * kWidth;
  p.in_stride = in_stride;
  p.out = out_dev.data();
  p.out_stride = out_stride;
  LaunchBidirectionalAttention(backend, p);
  return out_dev.Download();
}

class RowAttentionTest : public ::testing::TestWithParam<BackendCase> {};

TEST_P(RowAttentionTest, MemoryAttentionMatchesTheReference) {
  SLOTSERVE_SKIP_IF_UNAVAILABLE(GetParam().backend);
  const std::vector<float> pool = MemoryPool();
  const std::vector<int32_t> slots = {2, 0, 2, 1, 0};
  for (bool stored_length : {false, true}) {
    ExpectAllClose(RunMemoryAttention(GetParam().backend, pool, slots, stored_length),
                   RunMemoryAttention(Backend::kReference, pool, slots, stored_length),
                   GetParam().tolerance, stored_length ? "stored length" : "full capacity");
  }
}

TEST_P(RowAttentionTest, BidirectionalAttentionMatchesTheReference) {
  SLOTSERVE_SKIP_IF_UNAVAILABLE(GetParam().backend);
  for (int rows : {1, 2, 9, 40}) {
    const std::vector<float> qkv = RandomFloats(rows * (3 * kWidth + 1), 20 + rows, -2.0f, 2.0f);
    ExpectAllClose(RunBidirectionalAttention(GetParam().backend, rows, qkv),
                   RunBidirectionalAttention(Backend::kReference, rows, qkv), GetParam().tolerance,
                   "rows " + std::to_string(rows));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, RowAttentionTest, ::testing::ValuesIn(F32Cases()),
                         [](const auto& info) { return CaseName(info.param); });

// A memory of one row gives that row's value whatever the query.
TEST(RowAttentionReferenceTest, OneMemoryRowGivesItsValue) {
  const std::vector<float> pool = MemoryPool();
  const std::vector<float> out = RunMemoryAttention(Backend::kReference, pool, {1}, true);
  const float* value = pool.data() + kSlotStride + kLayerOffset + kCapacity * kWidth;
  for (int c = 0; c < kWidth; ++c) EXPECT_NEAR(out[c], value[c], 1e-6f) << c;
}

// Equal keys give equal weights: every row's output is the mean of the values, so the last
// row sees the first (no causal mask).
TEST(RowAttentionReferenceTest, EqualKeysAverageEveryValue) {
  const int rows = 4;
  const int64_t in_stride = 3 * kWidth + 1;
  std::vector<float> qkv = RandomFloats(rows * in_stride, 5);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < kWidth; ++c) qkv[r * in_stride + kWidth + c] = 0.5f;
  }
  const std::vector<float> out = RunBidirectionalAttention(Backend::kReference, rows, qkv);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < kWidth; ++c) {
      float mean = 0.0f;
      for (int s = 0; s < rows; ++s) mean += qkv[s * in_stride + 2 * kWidth + c] / rows;
      EXPECT_NEAR(out[r * (kWidth + 2) + c], mean, 1e-6f) << r << "," << c;
    }
  }
}

}  // namespace
}  // namespace slotserve::kernels::testing
