// The fixed arena of per-request recurrent states on the model's device: `num_slots` equal
// blocks, one per request (docs/ARCHITECTURE.md "A request's path"). It knows nothing of which
// slots are in use; the engine's slot pool does that bookkeeping.
//
// An arena may also hold shared blocks (an encoder–decoder model's cross memories,
// docs/ARCHITECTURE.md "Encoder–decoder models"): state written once per request and only read
// afterwards, so the slots of one request's beams and choices read one block instead of each
// carrying a copy. A slot refers to at most one shared block (shared_block_table.h): Copy makes the
// destination read the source's block, Reset and Detach drop the reference, and Save / Restore
// carry the block's contents with the slot, so a snapshot is the whole request either way.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "kernels/device_memory.h"
#include "kernels/recurrent_state.h"
#include "models/shared_block_table.h"

namespace slotserve::models {

struct SharedBlocks {
  int count = 0;
  int64_t floats_per_block = 0;
  kernels::DeviceBuffer buffer;  // count * floats_per_block floats, zeroed
};

class StateArena {
 public:
  StateArena(kernels::Backend backend, int num_slots, int64_t floats_per_slot,
             kernels::DeviceBuffer buffer, SharedBlocks shared = {});

  int num_slots() const { return num_slots_; }
  // The slot's own block: what every fork copies.
  int64_t floats_per_slot() const { return floats_per_slot_; }
  int64_t bytes_per_slot() const { return floats_per_slot_ * static_cast<int64_t>(sizeof(float)); }
  kernels::Backend backend() const { return backend_; }
  float* device_data() const { return buffer_.as<float>(); }

  int shared_block_count() const { return shared_table_.num_blocks(); }
  int free_shared_blocks() const { return shared_table_.free_blocks(); }
  int64_t floats_per_shared_block() const { return shared_.floats_per_block; }
  float* shared_data() const { return shared_.buffer.as<float>(); }
  // The shared block `slot` reads, or SharedBlockTable::kNone.
  int shared_block(int slot) const { return shared_table_.block_of(slot); }
  // Gives `slot` a fresh zeroed shared block of its own (dropping any it read).
  // RESOURCE_EXHAUSTED when every block is in use.
  absl::StatusOr<int> AttachNewSharedBlock(int slot);
  // Drops the slot's shared block reference (the engine calls it when a slot is released).
  void DetachSharedBlock(int slot);

  // Bytes one request's snapshot holds after its position: its slot, then its shared block.
  int64_t snapshot_state_bytes() const {
    return bytes_per_slot() + shared_.floats_per_block * static_cast<int64_t>(sizeof(float));
  }

  // Number of tokens the slot's state has absorbed (the position of its next token).
  int32_t position(int slot) const { return positions_[slot]; }
  void set_position(int slot, int32_t position) { positions_[slot] = position; }

  // Empties a slot (zeros its block, position 0, no shared block).
  absl::Status Reset(int slot);
  // Makes dst an exact copy of src: a fork of the request's whole context. The shared block
  // is shared, not copied.
  absl::Status Copy(int src, int dst);
  // Snapshot of a slot to host memory (position first, then the slot's state, then the
  // contents of its shared block, zeros when it has none) and back (Restore attaches a fresh
  // shared block for the contents).
  absl::Status Save(int slot, std::vector<uint8_t>* snapshot) const;
  absl::Status Restore(int slot, const std::vector<uint8_t>& snapshot);

 private:
  absl::Status CheckSlot(int slot, const char* what) const;
  float* shared_block_data(int block) const {
    return shared_data() + static_cast<int64_t>(block) * shared_.floats_per_block;
  }

  kernels::Backend backend_;
  int num_slots_;
  int64_t floats_per_slot_;
  kernels::DeviceBuffer buffer_;
  SharedBlocks shared_;
  SharedBlockTable shared_table_;
  std::vector<int32_t> positions_;
};

}  // namespace slotserve::models
