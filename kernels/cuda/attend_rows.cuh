// One warp's softmax attention of one query over n key/value rows, as an online softmax
// (running max, sum and weighted values in registers, so any n works without a scores
// buffer): out = softmax(q Kᵀ / sqrt(d)) V. Shared by the cross-attention memory and the
// encoder's unmasked attention; a block of kWarpSize threads runs it for one (row, head).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "kernels/cuda/reductions.cuh"

namespace slotserve::kernels::cuda {

constexpr int kAttendRowsMaxHeadDim = 256;

// Aborts with a clear message for a head_dim the register layout cannot hold.
inline void CheckAttendRowsHeadDim(const char* op, int head_dim) {
  if (head_dim > kAttendRowsMaxHeadDim) {
    std::fprintf(stderr,
                 "slotserve: cuda %s supports head_dim <= %d, got %d (d_model / n_heads); use the "
                 "cpu backend or more heads\n",
                 op, kAttendRowsMaxHeadDim, head_dim);
    std::abort();
  }
}

// Called by all kWarpSize threads of one warp. Rows s at keys/values + s*row_stride; n >= 1.
__device__ __forceinline__ void WarpAttendRows(const float* q, const float* keys,
                                               const float* values, int64_t row_stride, int n,
                                               int d, float* out) {
  constexpr int kPerLane = kAttendRowsMaxHeadDim / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  const float scale = rsqrtf(static_cast<float>(d));
  float q_part[kPerLane];
  float acc[kPerLane];
#pragma unroll
  for (int c = 0; c < kPerLane; ++c) {
    const int j = lane + c * kWarpSize;
    q_part[c] = j < d ? q[j] : 0.0f;
    acc[c] = 0.0f;
  }
  float running_max = -INFINITY;
  float running_sum = 0.0f;
  for (int s = 0; s < n; ++s) {
    const float* key = keys + s * row_stride;
    const float* value = values + s * row_stride;
    float dot = 0.0f;
#pragma unroll
    for (int c = 0; c < kPerLane; ++c) {
      const int j = lane + c * kWarpSize;
      if (j < d) dot += q_part[c] * key[j];
    }
    const float score = WarpSum(dot) * scale;
    const float new_max = fmaxf(running_max, score);
    const float correction = expf(running_max - new_max);  // 0 for the first row
    const float weight = expf(score - new_max);
    running_sum = running_sum * correction + weight;
#pragma unroll
    for (int c = 0; c < kPerLane; ++c) {
      const int j = lane + c * kWarpSize;
      if (j < d) acc[c] = acc[c] * correction + weight * value[j];
    }
    running_max = new_max;
  }
#pragma unroll
  for (int c = 0; c < kPerLane; ++c) {
    const int j = lane + c * kWarpSize;
    if (j < d) out[j] = acc[c] / running_sum;
  }
}

}  // namespace slotserve::kernels::cuda
