// Which shared block each slot of a state arena reads, and how many slots read each block: the
// bookkeeping that lets one request's cross memory (docs/ARCHITECTURE.md "Encoder–decoder models")
// be written once and read by all of its beams and choices. Host-side only; the blocks' floats are
// the arena's business.
//
// A slot refers to at most one block; a block is free while no slot refers to it. Attach gives
// a slot a fresh block of its own (dropping the one it had); Share makes a slot read another
// slot's block (a fork); Detach drops the slot's reference. A block returns to the free list
// when its last reader detaches, so however a request ends, releasing its slots frees its memory.
#pragma once

#include <vector>

#include "absl/status/statusor.h"

namespace slotserve::models {

class SharedBlockTable {
 public:
  static constexpr int kNone = -1;

  SharedBlockTable(int num_slots, int num_blocks);

  int num_blocks() const { return static_cast<int>(readers_.size()); }
  int free_blocks() const { return static_cast<int>(free_.size()); }
  // The block `slot` reads, or kNone.
  int block_of(int slot) const { return block_of_[slot]; }
  int readers(int block) const { return readers_[block]; }

  // Detaches `slot`, then gives it a free block (its only reader). RESOURCE_EXHAUSTED, with
  // the slot left detached, when every block is in use.
  absl::StatusOr<int> Attach(int slot);
  // Detaches `dst`, then makes it read `src`'s block (nothing when src has none).
  void Share(int src, int dst);
  void Detach(int slot);

 private:
  std::vector<int> block_of_;  // per slot
  std::vector<int> readers_;   // per block
  std::vector<int> free_;      // LIFO
};

}  // namespace slotserve::models
