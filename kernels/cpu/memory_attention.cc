// cpu attention over a slot's memory rows: per request and head, dot products against the
// memory's keys, softmax, and a weighted sum of its values (the memory is small: the source
// length, M or L rows).
#include "kernels/memory_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/row_products.h"
#include "kernels/cpu/vector_ops.h"
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
  cpu::ParallelFor(pairs, int64_t{pairs} * p.capacity * 2 * d, [&](int begin, int end) {
    std::vector<float> scores(p.capacity);
    for (int pair = begin; pair < end; ++pair) {
      const int r = pair / p.heads;
      const int h = pair % p.heads;
      const float* keys = host::LayerState(target.state, target.slots[r]);
      const float* values = keys + p.capacity * width;
      const float* slot = target.state.pool + target.slots[r] * target.state.slot_stride;
      const int n = p.length_offset < 0 ? p.capacity : static_cast<int>(slot[p.length_offset]);
      const float* q = p.q + r * p.q_stride + h * d;
      cpu::DotRows(q, keys + h * d, width, n, d, scores.data());
      for (int s = 0; s < n; ++s) scores[s] *= scale;
      cpu::SoftmaxInPlace(scores.data(), n);
      cpu::WeightedRowSum(scores.data(), values + h * d, width, n, d,
                          p.out + r * p.out_stride + h * d);
    }
  });
}

}  // namespace slotserve::kernels
