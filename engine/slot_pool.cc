#include "engine/slot_pool.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace slotserve::engine {

SlotPool::SlotPool(models::StateArena* arena)
    : arena_(arena), held_(static_cast<size_t>(arena->num_slots()), false) {
  free_.reserve(held_.size());
  // Hand out slot 0 first.
  for (int slot = arena->num_slots() - 1; slot >= 0; --slot) free_.push_back(slot);
}

absl::StatusOr<int> SlotPool::Acquire() {
  if (free_.empty()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("all ", total(), " state slots are held; none free"));
  }
  const int slot = free_.back();
  SLOTSERVE_RETURN_IF_ERROR(arena_->Reset(slot));
  free_.pop_back();
  held_[slot] = true;
  return slot;
}

absl::Status SlotPool::Release(int slot) {
  if (!is_held(slot)) {
    return absl::FailedPreconditionError(
        absl::StrCat("slot ", slot, " released but not held (pool of ", total(), ")"));
  }
  held_[slot] = false;
  free_.push_back(slot);
  // Its cross memory (seq2seq) goes back at once: the last slot of a request frees it.
  arena_->DetachSharedBlock(slot);
  return absl::OkStatus();
}

bool SlotPool::is_held(int slot) const { return slot >= 0 && slot < total() && held_[slot]; }

}  // namespace slotserve::engine
