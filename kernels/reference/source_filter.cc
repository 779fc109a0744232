// Reference source filter (kernels/source_filter.h): each output element from its window, in
// double.
#include "kernels/source_filter.h"

#include <algorithm>
#include <limits>

namespace slotserve::kernels {

template <>
void LaunchSourceFilter<Backend::kReference>(const SourceFilterParams& p, Stream /*stream*/) {
  const int out_rows = FilteredRows(p.positions, p.stride);
  for (int r = 0; r < out_rows; ++r) {
    const int start = r * p.stride;
    const int taps = std::min(p.kernel, p.positions - start);
    for (int c = 0; c < p.columns; ++c) {
      double result = p.maxpool ? -std::numeric_limits<double>::infinity() : p.bias[0];
      for (int u = 0; u < taps; ++u) {
        const double x = p.in[(start + u) * p.in_stride + c];
        result = p.maxpool ? std::max(result, x) : result + static_cast<double>(p.weight[u]) * x;
      }
      p.out[r * p.out_stride + c] = static_cast<float>(result);
    }
  }
}

}  // namespace slotserve::kernels
