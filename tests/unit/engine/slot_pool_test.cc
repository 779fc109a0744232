// Slot bookkeeping over a real (host) state arena.
#include "engine/slot_pool.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/unit/engine/fake_language_model.h"

namespace slotserve::engine {
namespace {

TEST(SlotPoolTest, HandsOutEverySlotOnceThenRefuses) {
  testing::FakeLanguageModel model;
  std::unique_ptr<models::StateArena> arena = *model.AllocateStates(4);
  SlotPool pool(arena.get());
  std::set<int> slots;
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<int> slot = pool.Acquire();
    ASSERT_TRUE(slot.ok()) << slot.status();
    slots.insert(*slot);
  }
  EXPECT_EQ(slots, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(pool.free_count(), 0);
  EXPECT_EQ(pool.Acquire().status().code(), absl::StatusCode::kResourceExhausted);
  for (int slot : slots) EXPECT_TRUE(pool.Release(slot).ok());
  EXPECT_EQ(pool.free_count(), 4);
  EXPECT_EQ(pool.used_count(), 0);
}

TEST(SlotPoolTest, RefusesReleasingASlotThatIsNotHeld) {
  testing::FakeLanguageModel model;
  std::unique_ptr<models::StateArena> arena = *model.AllocateStates(2);
  SlotPool pool(arena.get());
  EXPECT_EQ(pool.Release(0).code(), absl::StatusCode::kFailedPrecondition);
  const int slot = *pool.Acquire();
  EXPECT_TRUE(pool.Release(slot).ok());
  EXPECT_EQ(pool.Release(slot).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(pool.Release(7).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(pool.free_count(), 2);
}

TEST(SlotPoolTest, AcquireResetsTheSlotLeftByThePreviousRequest) {
  testing::FakeLanguageModel model;
  std::unique_ptr<models::StateArena> arena = *model.AllocateStates(1);
  SlotPool pool(arena.get());
  const int slot = *pool.Acquire();
  arena->device_data()[slot] = 42.0f;
  arena->set_position(slot, 17);
  ASSERT_TRUE(pool.Release(slot).ok());
  const int again = *pool.Acquire();
  EXPECT_EQ(again, slot);
  EXPECT_EQ(arena->device_data()[again], 0.0f);
  EXPECT_EQ(arena->position(again), 0);
}

}  // namespace
}  // namespace slotserve::engine
