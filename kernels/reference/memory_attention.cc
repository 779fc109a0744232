// Reference attention over a slot's memory rows (layout in kernels/memory_attention.h).
#include "kernels/memory_attention.h"

#include "kernels/reference/attend_rows.h"
#include "kernels/reference/host_access.h"

namespace slotserve::kernels {

template <>
void LaunchMemoryAttention<Backend::kReference>(const MemoryAttentionParams& p,
                                                const StepTarget& target, Stream /*stream*/) {
  const int d = p.head_dim;
  const int64_t width = static_cast<int64_t>(p.heads) * d;
  for (int r = 0; r < p.rows; ++r) {
    const float* keys = host::LayerState(target.state, target.slots[r]);
    const float* values = keys + p.capacity * width;
    const float* slot = target.state.pool + target.slots[r] * target.state.slot_stride;
    const int n = p.length_offset < 0 ? p.capacity : static_cast<int>(slot[p.length_offset]);
    for (int h = 0; h < p.heads; ++h) {
      host::AttendRowsInDouble(p.q + r * p.q_stride + h * d, keys + h * d, values + h * d, width, n,
                               d, p.out + r * p.out_stride + h * d);
    }
  }
}

}  // namespace slotserve::kernels
