#include "models/state_arena.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace slotserve::models {

StateArena::StateArena(kernels::Backend backend, int num_slots, int64_t floats_per_slot,
                       kernels::DeviceBuffer buffer, SharedBlocks shared)
    : backend_(backend),
      num_slots_(num_slots),
      floats_per_slot_(floats_per_slot),
      buffer_(std::move(buffer)),
      shared_(std::move(shared)),
      shared_table_(num_slots, shared_.floats_per_block > 0 ? shared_.count : 0),
      positions_(static_cast<size_t>(num_slots), 0) {}

absl::Status StateArena::CheckSlot(int slot, const char* what) const {
  if (slot < 0 || slot >= num_slots_) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": slot ", slot, " is outside the state arena [0, ", num_slots_, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> StateArena::AttachNewSharedBlock(int slot) {
  SLOTSERVE_RETURN_IF_ERROR(CheckSlot(slot, "AttachNewSharedBlock"));
  SLOTSERVE_ASSIGN_OR_RETURN(const int block, shared_table_.Attach(slot));
  kernels::FillZero(backend_, shared_block_data(block),
                    static_cast<size_t>(shared_.floats_per_block) * sizeof(float));
  return block;
}

void StateArena::DetachSharedBlock(int slot) {
  if (slot >= 0 && slot < num_slots_) shared_table_.Detach(slot);
}

absl::Status StateArena::Reset(int slot) {
  SLOTSERVE_RETURN_IF_ERROR(CheckSlot(slot, "Reset"));
  kernels::FillZero(backend_, device_data() + slot * floats_per_slot_,
                    static_cast<size_t>(bytes_per_slot()));
  positions_[slot] = 0;
  shared_table_.Detach(slot);
  return absl::OkStatus();
}

absl::Status StateArena::Copy(int src, int dst) {
  SLOTSERVE_RETURN_IF_ERROR(CheckSlot(src, "Copy source"));
  SLOTSERVE_RETURN_IF_ERROR(CheckSlot(dst, "Copy destination"));
  if (src == dst) return absl::OkStatus();
  kernels::CopyDeviceToDevice(backend_, device_data() + dst * floats_per_slot_,
                              device_data() + src * floats_per_slot_,
                              static_cast<size_t>(bytes_per_slot()));
  positions_[dst] = positions_[src];
  shared_table_.Share(src, dst);
  return absl::OkStatus();
}

absl::Status StateArena::Save(int slot, std::vector<uint8_t>* snapshot) const {
  SLOTSERVE_RETURN_IF_ERROR(CheckSlot(slot, "Save"));
  const size_t state_bytes = static_cast<size_t>(bytes_per_slot());
  const size_t shared_bytes = static_cast<size_t>(snapshot_state_bytes()) - state_bytes;
  snapshot->resize(sizeof(int32_t) + state_bytes + shared_bytes);
  std::memcpy(snapshot->data(), &positions_[slot], sizeof(int32_t));
  kernels::CopyDeviceToHost(backend_, snapshot->data() + sizeof(int32_t),
                            device_data() + slot * floats_per_slot_, state_bytes);
  uint8_t* shared_part = snapshot->data() + sizeof(int32_t) + state_bytes;
  if (const int block = shared_block(slot); block != SharedBlockTable::kNone) {
    kernels::CopyDeviceToHost(backend_, shared_part, shared_block_data(block), shared_bytes);
  } else {
    std::memset(shared_part, 0, shared_bytes);
  }
  kernels::Synchronize(backend_);
  return absl::OkStatus();
}

absl::Status StateArena::Restore(int slot, const std::vector<uint8_t>& snapshot) {
  SLOTSERVE_RETURN_IF_ERROR(CheckSlot(slot, "Restore"));
  const size_t state_bytes = static_cast<size_t>(bytes_per_slot());
  const size_t shared_bytes = static_cast<size_t>(snapshot_state_bytes()) - state_bytes;
  if (snapshot.size() != sizeof(int32_t) + state_bytes + shared_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("Restore: snapshot holds ", snapshot.size(), " bytes, expected ",
                     sizeof(int32_t) + state_bytes + shared_bytes,
                     shared_bytes > 0 ? " (a position, one slot's state and its cross memory)"
                                      : " (a position and one slot's state)"));
  }
  int32_t position;
  std::memcpy(&position, snapshot.data(), sizeof(position));
  if (position < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Restore: snapshot position ", position, " is negative"));
  }
  if (shared_bytes > 0) {
    SLOTSERVE_ASSIGN_OR_RETURN(const int block, shared_table_.Attach(slot));
    kernels::CopyHostToDevice(backend_, shared_block_data(block),
                              snapshot.data() + sizeof(int32_t) + state_bytes, shared_bytes);
  }
  kernels::CopyHostToDevice(backend_, device_data() + slot * floats_per_slot_,
                            snapshot.data() + sizeof(int32_t), state_bytes);
  kernels::Synchronize(backend_);
  positions_[slot] = position;
  return absl::OkStatus();
}

}  // namespace slotserve::models
