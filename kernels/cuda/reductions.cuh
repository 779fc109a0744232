// Warp- and block-wide reductions shared by the cuda kernels. Every reduction uses a fixed
// tree for a given block size, so results are bit-for-bit reproducible run to run.
#pragma once

#include <cuda_runtime.h>

#include <cmath>

namespace slotserve::kernels::cuda {

constexpr int kWarpSize = 32;
constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ float WarpSum(float value) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    value += __shfl_xor_sync(kFullMask, value, offset);
  }
  return value;
}

__device__ __forceinline__ float WarpMax(float value) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    value = fmaxf(value, __shfl_xor_sync(kFullMask, value, offset));
  }
  return value;
}

// Sum over the whole block, returned to every thread. `scratch` holds one float per warp
// (32 floats suffice for any block). Contains __syncthreads, so every thread must call it.
__device__ __forceinline__ float BlockSum(float value, float* scratch) {
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int warps = (blockDim.x + kWarpSize - 1) / kWarpSize;
  value = WarpSum(value);
  __syncthreads();  // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  float total = lane < warps ? scratch[lane] : 0.0f;
  return WarpSum(total);
}

__device__ __forceinline__ float BlockMax(float value, float* scratch) {
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int warps = (blockDim.x + kWarpSize - 1) / kWarpSize;
  value = WarpMax(value);
  __syncthreads();
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  float best = lane < warps ? scratch[lane] : -INFINITY;
  return WarpMax(best);
}

}  // namespace slotserve::kernels::cuda
