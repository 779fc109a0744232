// cpu attention over a slot's memory rows: per request and head, dot products against the
// memory's keys, softmax, and a weighted sum of its values (the memory is small: the source
// length, M or L rows), each pair prefetching the next one's rows (cpu/head_reads.h).
#include "kernels/memory_attention.h"

#include <cmath>

#include "kernels/cpu/head_reads.h"
#include "kernels/cpu/parallel_for.h"
#include "kernels/reference/host_access.h"

namespace slotserve::kernels {

template <>
void LaunchMemoryAttention<Backend::kCpu>(const MemoryAttentionParams& p, const StepTarget& target,
                                          Stream /*stream*/) {
  const int d = p.head_dim;
  const int64_t width = static_cast<int64_t>(p.heads) * d;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  // (row, head) pairs only read the memory: split between the compute threads (parallel_for.h);
  // the cost estimate takes every row at full capacity.
  const int pairs = p.rows * p.heads;
  auto pair_read = [&](int pair) {
    const int r = pair / p.heads;
    const int h = pair % p.heads;
    const float* keys = host::LayerState(target.state, target.slots[r]);
    const float* values = keys + p.capacity * width;
    const float* slot = target.state.pool + target.slots[r] * target.state.slot_stride;
    const int n = p.length_offset < 0 ? p.capacity : static_cast<int>(slot[p.length_offset]);
    return cpu::HeadRead<float>{p.q + r * p.q_stride + h * d, p.out + r * p.out_stride + h * d,
                                keys + h * d, values + h * d, n};
  };
  cpu::ParallelFor(pairs, int64_t{pairs} * p.capacity * 2 * d, [&](int begin, int end) {
    cpu::AttendPairs<float>(begin, end, pair_read, width, d, scale);
  });
}

}  // namespace slotserve::kernels
