// ConvLuna's filter along the source axis (docs/ARCHITECTURE.md "Encoder–decoder models", cross
// kind luna with a filter): windows start at 0, stride, 2·stride, … while the start is < positions,
// each covering `kernel` positions, taps past the end skipped; ⌈positions/stride⌉ output rows.
// conv: Σ_u w[u]·x[start+u]
// + b, one kernel shared by every column; maxpool: the max over the window. Columns are
// independent, so the projected keys and values can be filtered in one launch.
#pragma once

#include <cstdint>

#include "kernels/backend.h"

namespace slotserve::kernels {

struct SourceFilterParams {
  int positions = 0;  // input rows, >= 1
  int columns = 0;
  int kernel = 1;
  int stride = 1;
  bool maxpool = false;
  const float* weight = nullptr;  // conv: [kernel] F32 on the device
  const float* bias = nullptr;    // conv: [1]
  const float* in = nullptr;
  int64_t in_stride = 0;
  float* out = nullptr;  // [FilteredRows() x columns], rows `out_stride` apart
  int64_t out_stride = 0;
};

inline int FilteredRows(int positions, int stride) { return (positions + stride - 1) / stride; }

template <Backend B>
void LaunchSourceFilter(const SourceFilterParams& params, Stream stream);

inline void LaunchSourceFilter(Backend backend, const SourceFilterParams& params,
                               Stream stream = nullptr) {
  Dispatch(backend, "source_filter",
           [&](auto tag) { LaunchSourceFilter<decltype(tag)::value>(params, stream); });
}

}  // namespace slotserve::kernels
