// Exact widening of the number types weights and caches are stored in to fp32, the type every
// CUDA kernel computes in. One definition for the embedding, the linears and the softmax cache.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace slotserve::kernels::cuda {

__device__ __forceinline__ float Widen(float value) { return value; }
__device__ __forceinline__ float Widen(__half value) { return __half2float(value); }
__device__ __forceinline__ float Widen(__nv_bfloat16 value) { return __bfloat162float(value); }
__device__ __forceinline__ float Widen(int8_t value) { return static_cast<float>(value); }

// The eight 16-bit numbers (T = __half or __nv_bfloat16) of one 16-byte load, widened.
template <typename T>
__device__ __forceinline__ void Widen8(const uint4& packed, float* out) {
  static_assert(sizeof(T) == 2, "eight 16-bit numbers per 16-byte load");
  const T* values = reinterpret_cast<const T*>(&packed);
#pragma unroll
  for (int k = 0; k < 8; ++k) out[k] = Widen(values[k]);
}

}  // namespace slotserve::kernels::cuda
