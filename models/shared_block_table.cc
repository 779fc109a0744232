#include "models/shared_block_table.h"

#include "absl/strings/str_cat.h"

namespace slotserve::models {

SharedBlockTable::SharedBlockTable(int num_slots, int num_blocks)
    : block_of_(static_cast<size_t>(num_slots), kNone),
      readers_(static_cast<size_t>(num_blocks), 0) {
  free_.reserve(readers_.size());
  for (int block = num_blocks - 1; block >= 0; --block) free_.push_back(block);
}

absl::StatusOr<int> SharedBlockTable::Attach(int slot) {
  Detach(slot);
  if (free_.empty()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "all ", num_blocks(), " cross memories are in use; none free for slot ", slot));
  }
  const int block = free_.back();
  free_.pop_back();
  block_of_[slot] = block;
  readers_[block] = 1;
  return block;
}

void SharedBlockTable::Share(int src, int dst) {
  if (src == dst) return;
  Detach(dst);
  const int block = block_of_[src];
  if (block == kNone) return;
  block_of_[dst] = block;
  ++readers_[block];
}

void SharedBlockTable::Detach(int slot) {
  const int block = block_of_[slot];
  if (block == kNone) return;
  block_of_[slot] = kNone;
  if (--readers_[block] == 0) free_.push_back(block);
}

}  // namespace slotserve::models
