// fla's GatedMLP activation (docs/FLA_CHECKPOINTS.md §3.1): out = silu(gate) ⊙ up, with
// silu(x) = x * sigmoid(x), element-wise over the first `cols` columns of each row.
#pragma once

#include <cstdint>

#include "kernels/backend.h"

namespace slotserve::kernels {

struct SwiGluParams {
  const float* gate = nullptr;  // [rows, in_stride]
  const float* up = nullptr;    // [rows, in_stride]
  int64_t in_stride = 0;
  float* out = nullptr;  // [rows, out_stride]; may alias gate (then out_stride == in_stride)
  int64_t out_stride = 0;
  int rows = 0;
  int cols = 0;
};

template <Backend B>
void LaunchSwiGlu(const SwiGluParams& params, Stream stream);

inline void LaunchSwiGlu(Backend backend, const SwiGluParams& params, Stream stream = nullptr) {
  Dispatch(backend, "swiglu",
           [&](auto tag) { LaunchSwiGlu<decltype(tag)::value>(params, stream); });
}

}  // namespace slotserve::kernels
