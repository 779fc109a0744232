// StateArena bookkeeping on each host backend: reset, copy (fork), save and restore touch
// exactly one slot's block and position, and bad slots or snapshots are refused.
#include "models/state_arena.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace slotserve::models {
namespace {

constexpr int kSlots = 4;
constexpr int64_t kFloatsPerSlot = 10;

class StateArenaTest : public ::testing::TestWithParam<kernels::Backend> {
 protected:
  void SetUp() override {
    auto buffer =
        kernels::DeviceBuffer::Allocate(GetParam(), kSlots * kFloatsPerSlot * sizeof(float));
    ASSERT_TRUE(buffer.ok()) << buffer.status();
    arena_ = std::make_unique<StateArena>(GetParam(), kSlots, kFloatsPerSlot, *std::move(buffer));
    // Slot s holds s*100 + i; slot s is at position s + 1.
    std::vector<float> values(kSlots * kFloatsPerSlot);
    for (int s = 0; s < kSlots; ++s) {
      for (int i = 0; i < kFloatsPerSlot; ++i) values[s * kFloatsPerSlot + i] = s * 100.0f + i;
      arena_->set_position(s, s + 1);
    }
    kernels::CopyHostToDevice(GetParam(), arena_->device_data(), values.data(),
                              values.size() * sizeof(float));
  }

  std::vector<float> SlotValues(int slot) const {
    std::vector<float> values(kFloatsPerSlot);
    kernels::CopyDeviceToHost(GetParam(), values.data(),
                              arena_->device_data() + slot * kFloatsPerSlot,
                              kFloatsPerSlot * sizeof(float));
    return values;
  }
  static std::vector<float> Original(int slot) {
    std::vector<float> values(kFloatsPerSlot);
    for (int i = 0; i < kFloatsPerSlot; ++i) values[i] = slot * 100.0f + i;
    return values;
  }

  std::unique_ptr<StateArena> arena_;
};

TEST_P(StateArenaTest, ReportsItsShape) {
  EXPECT_EQ(arena_->num_slots(), kSlots);
  EXPECT_EQ(arena_->floats_per_slot(), kFloatsPerSlot);
  EXPECT_EQ(arena_->bytes_per_slot(), kFloatsPerSlot * 4);
  EXPECT_EQ(arena_->backend(), GetParam());
}

TEST_P(StateArenaTest, ResetEmptiesOnlyThatSlot) {
  ASSERT_TRUE(arena_->Reset(2).ok());
  EXPECT_EQ(SlotValues(2), std::vector<float>(kFloatsPerSlot, 0.0f));
  EXPECT_EQ(arena_->position(2), 0);
  for (int s : {0, 1, 3}) {
    EXPECT_EQ(SlotValues(s), Original(s));
    EXPECT_EQ(arena_->position(s), s + 1);
  }
}

TEST_P(StateArenaTest, CopyForksStateAndPosition) {
  ASSERT_TRUE(arena_->Copy(1, 3).ok());
  EXPECT_EQ(SlotValues(3), Original(1));
  EXPECT_EQ(arena_->position(3), 2);
  EXPECT_EQ(SlotValues(1), Original(1));
  EXPECT_EQ(SlotValues(0), Original(0));
  EXPECT_EQ(SlotValues(2), Original(2));
  ASSERT_TRUE(arena_->Copy(2, 2).ok());
  EXPECT_EQ(SlotValues(2), Original(2));
}

TEST_P(StateArenaTest, SaveAndRestoreRoundTrip) {
  std::vector<uint8_t> snapshot;
  ASSERT_TRUE(arena_->Save(1, &snapshot).ok());
  EXPECT_EQ(snapshot.size(), sizeof(int32_t) + kFloatsPerSlot * sizeof(float));
  ASSERT_TRUE(arena_->Reset(1).ok());
  ASSERT_TRUE(arena_->Restore(0, snapshot).ok());
  EXPECT_EQ(SlotValues(0), Original(1));
  EXPECT_EQ(arena_->position(0), 2);
  EXPECT_EQ(SlotValues(1), std::vector<float>(kFloatsPerSlot, 0.0f));
  EXPECT_EQ(SlotValues(3), Original(3));
}

TEST_P(StateArenaTest, RefusesBadSnapshots) {
  std::vector<uint8_t> snapshot;
  ASSERT_TRUE(arena_->Save(1, &snapshot).ok());
  std::vector<uint8_t> short_snapshot(snapshot.begin(), snapshot.end() - 1);
  absl::Status status = arena_->Restore(0, short_snapshot);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("expected 44"), std::string::npos) << status;
  std::vector<uint8_t> negative = snapshot;
  const int32_t minus_one = -1;
  std::memcpy(negative.data(), &minus_one, sizeof(minus_one));
  EXPECT_FALSE(arena_->Restore(0, negative).ok());
  // Refused restores leave the slot alone.
  EXPECT_EQ(SlotValues(0), Original(0));
  EXPECT_EQ(arena_->position(0), 1);
}

TEST_P(StateArenaTest, RefusesSlotsOutsideTheArena) {
  std::vector<uint8_t> snapshot;
  for (int slot : {-1, kSlots}) {
    EXPECT_EQ(arena_->Reset(slot).code(), absl::StatusCode::kInvalidArgument);
    EXPECT_FALSE(arena_->Copy(slot, 0).ok());
    EXPECT_FALSE(arena_->Copy(0, slot).ok());
    EXPECT_FALSE(arena_->Save(slot, &snapshot).ok());
    EXPECT_FALSE(arena_->Restore(slot, std::vector<uint8_t>(44)).ok());
  }
  const absl::Status status = arena_->Reset(kSlots);
  EXPECT_NE(status.message().find("slot 4 is outside the state arena [0, 4)"), std::string::npos)
      << status;
}

// An arena with shared blocks (an encoder–decoder model's cross memories): forks share, a
// snapshot carries the block's contents, a restore takes a fresh block.
class SharedStateArenaTest : public ::testing::TestWithParam<kernels::Backend> {
 protected:
  static constexpr int64_t kShared = 3;
  void SetUp() override {
    auto slots = kernels::DeviceBuffer::Allocate(GetParam(), kSlots * kFloatsPerSlot * 4);
    auto blocks = kernels::DeviceBuffer::Allocate(GetParam(), 2 * kShared * 4);
    ASSERT_TRUE(slots.ok() && blocks.ok());
    arena_ = std::make_unique<StateArena>(
        GetParam(), kSlots, kFloatsPerSlot, *std::move(slots),
        SharedBlocks{.count = 2, .floats_per_block = kShared, .buffer = *std::move(blocks)});
  }
  void FillBlock(int slot, float value) {
    const std::vector<float> values(kShared, value);
    kernels::CopyHostToDevice(GetParam(),
                              arena_->shared_data() + arena_->shared_block(slot) * kShared,
                              values.data(), kShared * 4);
  }
  std::vector<float> BlockValues(int slot) const {
    std::vector<float> values(kShared);
    kernels::CopyDeviceToHost(GetParam(), values.data(),
                              arena_->shared_data() + arena_->shared_block(slot) * kShared,
                              kShared * 4);
    return values;
  }
  std::unique_ptr<StateArena> arena_;
};

TEST_P(SharedStateArenaTest, ForksShareAndSnapshotsCarryTheBlock) {
  EXPECT_EQ(arena_->snapshot_state_bytes(), (kFloatsPerSlot + kShared) * 4);
  ASSERT_TRUE(arena_->AttachNewSharedBlock(0).ok());
  EXPECT_EQ(BlockValues(0), std::vector<float>(kShared, 0.0f));  // fresh blocks are zeroed
  FillBlock(0, 7.0f);
  ASSERT_TRUE(arena_->Copy(0, 1).ok());
  EXPECT_EQ(arena_->shared_block(1), arena_->shared_block(0));
  EXPECT_EQ(arena_->free_shared_blocks(), 1);
  std::vector<uint8_t> snapshot;
  ASSERT_TRUE(arena_->Save(1, &snapshot).ok());
  EXPECT_EQ(snapshot.size(), sizeof(int32_t) + (kFloatsPerSlot + kShared) * 4);
  ASSERT_TRUE(arena_->Restore(2, snapshot).ok());
  EXPECT_NE(arena_->shared_block(2), arena_->shared_block(0));
  EXPECT_EQ(BlockValues(2), std::vector<float>(kShared, 7.0f));
  EXPECT_EQ(arena_->free_shared_blocks(), 0);
  // Every block in use: a further restore is refused and leaves the slot as it was.
  const absl::Status refused = arena_->Restore(3, snapshot);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_EQ(arena_->shared_block(3), SharedBlockTable::kNone);
  arena_->DetachSharedBlock(0);
  ASSERT_TRUE(arena_->Reset(1).ok());
  EXPECT_EQ(arena_->free_shared_blocks(), 1);
  // A slot with no block saves zeros in the block's place.
  ASSERT_TRUE(arena_->Save(3, &snapshot).ok());
  float tail[kShared];
  std::memcpy(tail, snapshot.data() + sizeof(int32_t) + kFloatsPerSlot * 4, sizeof(tail));
  EXPECT_EQ(std::vector<float>(tail, tail + kShared), std::vector<float>(kShared, 0.0f));
}

INSTANTIATE_TEST_SUITE_P(HostBackends, SharedStateArenaTest,
                         ::testing::Values(kernels::Backend::kReference, kernels::Backend::kCpu),
                         [](const auto& info) {
                           return std::string(kernels::BackendName(info.param));
                         });

INSTANTIATE_TEST_SUITE_P(HostBackends, StateArenaTest,
                         ::testing::Values(kernels::Backend::kReference, kernels::Backend::kCpu),
                         [](const auto& info) {
                           return std::string(kernels::BackendName(info.param));
                         });

}  // namespace
}  // namespace slotserve::models
