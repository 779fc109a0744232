// Grid sizing helpers shared by the element-wise cuda kernels.
#pragma once

#include <cstdint>

namespace slotserve::kernels::cuda {

constexpr int kElementwiseThreads = 256;

// Blocks for `count` elements at kElementwiseThreads each, capped so grid-stride loops cover
// the rest (a grid dimension must stay below 2^31).
inline unsigned ElementwiseBlocks(int64_t count) {
  constexpr int64_t kMaxBlocks = 65535LL * 16;
  int64_t blocks = (count + kElementwiseThreads - 1) / kElementwiseThreads;
  if (blocks < 1) blocks = 1;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

}  // namespace slotserve::kernels::cuda
