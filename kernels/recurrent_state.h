// Where an attention layer's per-request state lives inside the state arena, and which
// requests a prefill or step call touches.
//
// The arena holds `num_slots` equal blocks of `slot_stride` floats; a block is one request's
// whole state (all layers), so copying, snapshotting or resetting a request is one contiguous
// copy. A block of zeros is an empty state for every attention kind (ABC reads its running max
// only where z > 0), so reset is a plain memset.
#pragma once

#include <cstdint>

namespace slotserve::kernels {

struct StateView {
  float* pool = nullptr;      // base of the arena (device memory of the backend)
  int64_t slot_stride = 0;    // floats between consecutive slots
  int64_t layer_offset = 0;   // floats from a slot's start to this layer's state
};

// Prefill: `rows` consecutive tokens of one request, the first at `start_position`
// (the number of tokens the request's state has already absorbed).
struct PrefillTarget {
  StateView state;
  int32_t slot = 0;
  int32_t start_position = 0;
};

// Step: one token for each of `rows` requests; row i belongs to slots[i] and is that request's
// token number positions[i] (counted from 0). Both arrays are in the backend's device memory.
struct StepTarget {
  StateView state;
  const int32_t* slots = nullptr;
  const int32_t* positions = nullptr;
};

}  // namespace slotserve::kernels
