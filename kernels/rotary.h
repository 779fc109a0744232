// Rotary position embedding as fla's RotaryEmbedding applies it (docs/FLA_CHECKPOINTS.md §3.5):
// GPT-NeoX halves, not interleaved pairs. In place, per head of d = head_dim values, for
// i < d/2 with theta_i = base^(-2i/d) and a = position * theta_i:
//   x'[i]       = x[i] cos a - x[i + d/2] sin a
//   x'[i + d/2] = x[i + d/2] cos a + x[i] sin a
// The angle is formed in double: in float, position * theta loses ~1e-4 of phase at positions
// in the thousands.
#pragma once

#include <cstdint>

#include "kernels/backend.h"

namespace slotserve::kernels {

struct RotaryParams {
  float* x = nullptr;  // [rows, stride]; columns [0, heads * head_dim) rotated in place
  int64_t stride = 0;
  int rows = 0;
  int heads = 0;
  int head_dim = 0;                    // even
  const int32_t* positions = nullptr;  // [rows], device memory
  float base = 10000.0f;
};

template <Backend B>
void LaunchRotary(const RotaryParams& params, Stream stream);

inline void LaunchRotary(Backend backend, const RotaryParams& params, Stream stream = nullptr) {
  Dispatch(backend, "rotary",
           [&](auto tag) { LaunchRotary<decltype(tag)::value>(params, stream); });
}

}  // namespace slotserve::kernels
