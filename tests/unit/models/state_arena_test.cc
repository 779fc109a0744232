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

INSTANTIATE_TEST_SUITE_P(HostBackends, StateArenaTest,
                         ::testing::Values(kernels::Backend::kReference, kernels::Backend::kCpu),
                         [](const auto& info) {
                           return std::string(kernels::BackendName(info.param));
                         });

}  // namespace
}  // namespace slotserve::models
