// The cpu linear op's last step, y += bias, done by each compute thread on the output features
// it has just computed (still in its cache), instead of by the calling thread over every output
// after the product: a serial pass the other threads would wait through. The addition is the
// same, after the product, so the results keep their bits.
#pragma once

#include <cstdint>

#include "kernels/linear.h"

namespace slotserve::kernels::cpu {

// Adds p.bias (when there is one) to outputs [begin, end) of every row.
inline void AddBias(const LinearParams& p, int begin, int end) {
  if (p.bias == nullptr) return;
  for (int r = 0; r < p.rows; ++r) {
    float* y = p.y + static_cast<int64_t>(r) * p.y_stride;
    for (int o = begin; o < end; ++o) y[o] += p.bias[o];
  }
}

}  // namespace slotserve::kernels::cpu
