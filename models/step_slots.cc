#include "models/step_slots.h"

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"

namespace slotserve::models {

absl::Status StepSlotCheck::Check(const StateArena& states, std::span<const int32_t> slots,
                                  int64_t max_positions, const char* call) {
  if (in_step_.size() < static_cast<size_t>(states.num_slots())) {
    in_step_.resize(states.num_slots(), false);
  }
  size_t marked = 0;  // slots[0, marked) are flagged
  absl::Cleanup unmark = [&] {
    for (size_t j = 0; j < marked; ++j) in_step_[slots[j]] = false;
  };
  for (size_t i = 0; i < slots.size(); ++i) {
    const int32_t slot = slots[i];
    if (slot < 0 || slot >= states.num_slots()) {
      return absl::InvalidArgumentError(absl::StrCat(call, ": slot ", slot, " at index ", i,
                                                     " is outside the state arena [0, ",
                                                     states.num_slots(), ")"));
    }
    if (in_step_[slot]) {
      return absl::InvalidArgumentError(
          absl::StrCat(call, ": slot ", slot, " appears more than once; slots must be distinct"));
    }
    in_step_[slot] = true;
    ++marked;
    if (states.position(slot) >= max_positions) {
      return absl::InvalidArgumentError(
          absl::StrCat(call, ": slot ", slot, " is at position ", states.position(slot),
                       " and cannot take another token: this model holds at most ", max_positions,
                       " positions per request"));
    }
  }
  return absl::OkStatus();
}

}  // namespace slotserve::models
