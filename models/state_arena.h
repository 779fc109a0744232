// The fixed arena of per-request recurrent states on the model's device: `num_slots` equal
// blocks, one per request (DESIGN §4). It knows nothing of which slots are in use; the
// engine's slot pool does that bookkeeping.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "kernels/backend.h"
#include "kernels/device_memory.h"
#include "kernels/recurrent_state.h"

namespace slotserve::models {

class StateArena {
 public:
  StateArena(kernels::Backend backend, int num_slots, int64_t floats_per_slot,
             kernels::DeviceBuffer buffer);

  int num_slots() const { return num_slots_; }
  int64_t floats_per_slot() const { return floats_per_slot_; }
  int64_t bytes_per_slot() const { return floats_per_slot_ * static_cast<int64_t>(sizeof(float)); }
  kernels::Backend backend() const { return backend_; }
  float* device_data() const { return buffer_.as<float>(); }

  // Number of tokens the slot's state has absorbed (the position of its next token).
  int32_t position(int slot) const { return positions_[slot]; }
  void set_position(int slot, int32_t position) { positions_[slot] = position; }

  // Empties a slot (zeros its block, position 0).
  absl::Status Reset(int slot);
  // Makes dst an exact copy of src: a fork of the request's whole context.
  absl::Status Copy(int src, int dst);
  // Snapshot of a slot to host memory (position first, then the state) and back.
  absl::Status Save(int slot, std::vector<uint8_t>* snapshot) const;
  absl::Status Restore(int slot, const std::vector<uint8_t>& snapshot);

 private:
  absl::Status CheckSlot(int slot, const char* what) const;

  kernels::Backend backend_;
  int num_slots_;
  int64_t floats_per_slot_;
  kernels::DeviceBuffer buffer_;
  std::vector<int32_t> positions_;
};

}  // namespace slotserve::models
