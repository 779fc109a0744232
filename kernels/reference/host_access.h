// Small host-side helpers shared by the host backends (reference and cpu): reading one
// weight element of any dtype, and finding a request's layer state inside the arena.
#pragma once

#include <cstdint>

#include "kernels/backend.h"
#include "kernels/float16.h"
#include "kernels/recurrent_state.h"

namespace slotserve::kernels::host {

// Element `index` of a row-major array stored in `dtype`, widened to float (exact).
inline float LoadAsFloat(const void* data, DType dtype, int64_t index) {
  switch (dtype) {
    case DType::kF32:
      return static_cast<const float*>(data)[index];
    case DType::kF16:
      return HalfToFloat(static_cast<const uint16_t*>(data)[index]);
    case DType::kBF16:
      return BFloat16ToFloat(static_cast<const uint16_t*>(data)[index]);
    case DType::kI8:  // the integer; the caller multiplies by the row's scale (RowScale)
      return static_cast<float>(static_cast<const int8_t*>(data)[index]);
  }
  return 0.0f;
}

// The factor of row `row` of a matrix stored in `dtype`: its scale for I8, else 1.
inline double RowScale(const float* scales, DType dtype, int64_t row) {
  return dtype == DType::kI8 ? static_cast<double>(scales[row]) : 1.0;
}

// This layer's state inside `slot`'s block of the arena.
inline float* LayerState(const StateView& view, int32_t slot) {
  return view.pool + static_cast<int64_t>(slot) * view.slot_stride + view.layer_offset;
}

}  // namespace slotserve::kernels::host
