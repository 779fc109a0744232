// cpu source filter (kernels/source_filter.h): each output row built from its window's input
// rows a whole row at a time (vectorised along the columns).
#include "kernels/source_filter.h"

#include <algorithm>

#include "kernels/cpu/vector_ops.h"

namespace slotserve::kernels {

template <>
void LaunchSourceFilter<Backend::kCpu>(const SourceFilterParams& p, Stream /*stream*/) {
  const int out_rows = FilteredRows(p.positions, p.stride);
  for (int r = 0; r < out_rows; ++r) {
    const int start = r * p.stride;
    const int taps = std::min(p.kernel, p.positions - start);
    float* out = p.out + r * p.out_stride;
    if (p.maxpool) {
      std::copy_n(p.in + start * p.in_stride, p.columns, out);
      for (int u = 1; u < taps; ++u) {
        const float* x = p.in + (start + u) * p.in_stride;
        for (int c = 0; c < p.columns; ++c) out[c] = std::max(out[c], x[c]);
      }
    } else {
      std::fill(out, out + p.columns, p.bias[0]);
      for (int u = 0; u < taps; ++u) {
        cpu::Axpy(p.weight[u], p.in + (start + u) * p.in_stride, out, p.columns);
      }
    }
  }
}

}  // namespace slotserve::kernels
