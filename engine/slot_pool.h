// Which slots of the state arena are held by requests (docs/ARCHITECTURE.md "A request's path"). A
// request holds one slot from admission to its end; every kind of ending must Release it.
// Engine-thread only.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/state_arena.h"

namespace slotserve::engine {

class SlotPool {
 public:
  // Every slot of `arena` starts free. `arena` must outlive the pool.
  explicit SlotPool(models::StateArena* arena);

  // A free slot, reset to the empty state (position 0). RESOURCE_EXHAUSTED when none is
  // free; the reset's error when it fails (the slot then stays free).
  absl::StatusOr<int> Acquire();
  // Returns a held slot. FAILED_PRECONDITION when it is not held (a bookkeeping bug).
  absl::Status Release(int slot);

  int total() const { return static_cast<int>(held_.size()); }
  int free_count() const { return static_cast<int>(free_.size()); }
  int used_count() const { return total() - free_count(); }
  bool is_held(int slot) const;

 private:
  models::StateArena* arena_;
  std::vector<int> free_;  // LIFO: the most recently released (cache-warm) slot goes first
  std::vector<bool> held_;
};

}  // namespace slotserve::engine
