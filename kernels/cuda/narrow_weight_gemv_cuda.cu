// Small-batch linear over F16/BF16 weights: y[r, o] = sum_i W[o, i] x[r, i] + b[o] (+ y[r, o]).
//
// For one or two rows cuBLAS's tensor-core GEMM (linear_cuda.cu) is slower than reading the
// weights once, and it needs x split into 16-bit pieces. Here each weight is widened exactly
// and multiplied in fp32, as the cpu backend does.
//
// A block of kWarps warps owns kOutputs consecutive outputs; its warps split the inputs, each
// lane taking 8 consecutive inputs (one 16-byte load per output row) per pass, so every weight
// byte is read once, coalesced, with kOutputs loads in flight per lane. Each lane reuses the 8
// inputs of every row (read through the read-only cache; x is small and shared by all blocks)
// for the kOutputs outputs. Partial sums meet in shared memory in a fixed order, so the result
// does not depend on timing.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/narrow_weight_gemv.cuh"
#include "kernels/cuda/widen.cuh"

namespace slotserve::kernels::cuda {
namespace {

constexpr int kWarps = 8;
constexpr int kOutputs = 4;
constexpr int kInputsPerLoad = 8;  // 16 bytes of 16-bit weights

template <typename T, int kRows>
__global__ void __launch_bounds__(kWarps * 32)
    NarrowGemvKernel(const T* __restrict__ weight, int in_features, int out_features,
                     const float* __restrict__ x, int64_t x_stride, const float* __restrict__ bias,
                     bool accumulate, float* __restrict__ y, int64_t y_stride) {
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int first_output = blockIdx.x * kOutputs;
  float sums[kOutputs][kRows] = {};
  const T* rows[kOutputs];
#pragma unroll
  for (int j = 0; j < kOutputs; ++j) {
    // Outputs past the end re-read the last row; their sums are never written.
    const int o = min(first_output + j, out_features - 1);
    rows[j] = weight + static_cast<int64_t>(o) * in_features;
  }
  for (int i = (warp * 32 + lane) * kInputsPerLoad; i < in_features;
       i += kWarps * 32 * kInputsPerLoad) {
    uint4 packed[kOutputs];
#pragma unroll
    for (int j = 0; j < kOutputs; ++j) {
      packed[j] = __ldg(reinterpret_cast<const uint4*>(rows[j] + i));
    }
    float inputs[kRows][kInputsPerLoad];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const float4* source = reinterpret_cast<const float4*>(x + r * x_stride + i);
      const float4 a = __ldg(source);
      const float4 b = __ldg(source + 1);
      inputs[r][0] = a.x, inputs[r][1] = a.y, inputs[r][2] = a.z, inputs[r][3] = a.w;
      inputs[r][4] = b.x, inputs[r][5] = b.y, inputs[r][6] = b.z, inputs[r][7] = b.w;
    }
#pragma unroll
    for (int j = 0; j < kOutputs; ++j) {
      float w[kInputsPerLoad];
      Widen8<T>(packed[j], w);
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
#pragma unroll
        for (int k = 0; k < kInputsPerLoad; ++k) sums[j][r] = fmaf(w[k], inputs[r][k], sums[j][r]);
      }
    }
  }
  // Warp sums, then the block's warps in order.
  __shared__ float warp_sums[kWarps][kOutputs * kRows];
#pragma unroll
  for (int j = 0; j < kOutputs; ++j) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      float value = sums[j][r];
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) {
        value += __shfl_xor_sync(0xffffffffu, value, offset);
      }
      if (lane == 0) warp_sums[warp][j * kRows + r] = value;
    }
  }
  __syncthreads();
  for (int index = threadIdx.x; index < kOutputs * kRows; index += blockDim.x) {
    const int j = index / kRows;
    const int r = index % kRows;
    const int o = first_output + j;
    if (o >= out_features) continue;
    float value = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) value += warp_sums[w][index];
    if (bias != nullptr) value += bias[o];
    float* target = y + r * y_stride + o;
    if (accumulate) value += *target;
    *target = value;
  }
}

template <typename T, int kRows>
void Launch(const LinearParams& p, cudaStream_t stream) {
  const int blocks = (p.out_features + kOutputs - 1) / kOutputs;
  NarrowGemvKernel<T, kRows><<<blocks, kWarps * 32, 0, stream>>>(
      static_cast<const T*>(p.weight), p.in_features, p.out_features, p.x, p.x_stride, p.bias,
      p.accumulate, p.y, p.y_stride);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

template <typename T>
void LaunchRows(const LinearParams& p, cudaStream_t stream) {
  static_assert(kNarrowGemvMaxRows == 2, "one instance per row count");
  if (p.rows == 1) return Launch<T, 1>(p, stream);
  return Launch<T, 2>(p, stream);
}

}  // namespace

bool NarrowGemvApplies(const LinearParams& p) {
  const bool narrow = p.weight_dtype == DType::kF16 || p.weight_dtype == DType::kBF16;
  const auto aligned = [](const void* pointer) {
    return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0;
  };
  return narrow && p.rows >= 1 && p.rows <= kNarrowGemvMaxRows &&
         p.in_features % kInputsPerLoad == 0 && p.x_stride % 4 == 0 && aligned(p.x) &&
         aligned(p.weight);
}

void LaunchNarrowGemv(const LinearParams& p, cudaStream_t stream) {
  if (p.weight_dtype == DType::kF16) return LaunchRows<__half>(p, stream);
  return LaunchRows<__nv_bfloat16>(p, stream);
}

}  // namespace slotserve::kernels::cuda
