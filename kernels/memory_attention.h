// Softmax attention of query rows over a memory of key/value rows kept in each row's slot of
// the state arena: an encoder–decoder's cross attention at decode time for the cross kinds
// whose memory is a set of rows (softmax: the source's projected K, V; abc: K̄, V̄; luna: K̂, V̂).
// Per layer the memory is K [capacity x heads*d], V [capacity x heads*d] (in this order, the
// softmax KV cache's layout). The rows in use are the first `capacity`, or, for a memory as
// long as the source, the count stored as a float at `length_offset` floats from the slot's
// start (exact: the count is far below 2^24), so the slot alone says what it holds. The
// count must be >= 1 (Encode refuses an empty source).
// out[h] = softmax(q_h K_hᵀ / sqrt(d)) V_h; the memory is only read.
#pragma once

#include <cstdint>

#include "kernels/backend.h"
#include "kernels/recurrent_state.h"

namespace slotserve::kernels {

struct MemoryAttentionParams {
  int rows = 0;
  int heads = 0;
  int head_dim = 0;
  int capacity = 0;
  // Floats from a slot's start to its count of memory rows in use; -1: all `capacity` rows.
  int64_t length_offset = -1;
  const float* q = nullptr;
  int64_t q_stride = 0;
  float* out = nullptr;
  int64_t out_stride = 0;
};

inline int64_t MemoryAttentionFloatsPerLayer(int heads, int head_dim, int capacity) {
  return 2LL * capacity * heads * head_dim;
}

// Row i attends to the memory in slot target.slots[i]; target.positions is not read.
template <Backend B>
void LaunchMemoryAttention(const MemoryAttentionParams& params, const StepTarget& target,
                           Stream stream);

inline void LaunchMemoryAttention(Backend backend, const MemoryAttentionParams& params,
                                  const StepTarget& target, Stream stream = nullptr) {
  Dispatch(backend, "memory_attention",
           [&](auto tag) { LaunchMemoryAttention<decltype(tag)::value>(params, target, stream); });
}

}  // namespace slotserve::kernels
