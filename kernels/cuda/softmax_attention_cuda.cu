// CUDA causal softmax attention over the per-request KV cache (the baseline; layout in
// kernels/softmax_attention.h). One block per (query token, head); its warps take cached
// positions round-robin, each keeping an online softmax (running max, sum and weighted value
// accumulator in registers, so any context length works without a scores buffer), and the
// warps' partial results are merged at the end.
// Step: each block first writes its request's new k, v for its head at row `position`, then
// attends to rows 0..position. Prefill: one launch writes the chunk's k, v rows, a second
// attends with a block per (token, head). An f16 cache (SoftmaxAttentionParams::f16_cache) is
// the same code over __half rows: values are rounded to nearest as they are written and widened
// as they are read; all arithmetic stays fp32.
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "kernels/cuda/recurrent_head.cuh"
#include "kernels/cuda/widen.cuh"
#include "kernels/softmax_attention.h"

namespace slotserve::kernels {
namespace {

using cuda::kWarpSize;

constexpr int kAttentionThreads = 128;
constexpr int kAttentionWarps = kAttentionThreads / kWarpSize;
constexpr int kMaxHeadDim = 256;
constexpr int kValuesPerLane = kMaxHeadDim / kWarpSize;

template <typename Element>  // float, or __half for an f16 cache
struct KvCache {
  Element* keys;    // [max_context x width]
  Element* values;  // [max_context x width]
  int64_t width;    // heads * d
};

template <typename Element>
__device__ KvCache<Element> CacheOf(const SoftmaxAttentionParams& p, float* layer_state) {
  const int64_t width = static_cast<int64_t>(p.heads) * p.head_dim;
  Element* keys = reinterpret_cast<Element*>(layer_state);
  return {keys, keys + p.max_context * width, width};
}

using cuda::Widen;
template <typename Element>
__device__ Element Narrow(float x);
template <>
__device__ float Narrow<float>(float x) {
  return x;
}
template <>
__device__ __half Narrow<__half>(float x) {
  return __float2half_rn(x);
}

// out[h] = softmax(q_h K_h^T / sqrt(d)) V_h over cache rows 0..last_position.
template <typename Element>
__device__ void AttendToCache(const SoftmaxAttentionParams& p, const float* q_row,
                              const KvCache<Element>& cache, int h, int32_t last_position,
                              float* out_row) {
  __shared__ float warp_max[kAttentionWarps];
  __shared__ float warp_sum[kAttentionWarps];
  __shared__ float warp_values[kAttentionWarps][kMaxHeadDim];
  const int d = p.head_dim;
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const float scale = rsqrtf(static_cast<float>(d));

  float q[kValuesPerLane];
  float acc[kValuesPerLane];
#pragma unroll
  for (int c = 0; c < kValuesPerLane; ++c) {
    const int j = lane + c * kWarpSize;
    q[c] = j < d ? q_row[h * d + j] : 0.0f;
    acc[c] = 0.0f;
  }
  float running_max = -INFINITY;
  float running_sum = 0.0f;
  for (int s = warp; s <= last_position; s += kAttentionWarps) {
    const Element* key = cache.keys + s * cache.width + h * d;
    const Element* value = cache.values + s * cache.width + h * d;
    float dot = 0.0f;
#pragma unroll
    for (int c = 0; c < kValuesPerLane; ++c) {
      const int j = lane + c * kWarpSize;
      if (j < d) dot += q[c] * Widen(key[j]);
    }
    const float score = cuda::WarpSum(dot) * scale;
    const float new_max = fmaxf(running_max, score);
    const float correction = expf(running_max - new_max);  // 0 for the first position
    const float weight = expf(score - new_max);
    running_sum = running_sum * correction + weight;
#pragma unroll
    for (int c = 0; c < kValuesPerLane; ++c) {
      const int j = lane + c * kWarpSize;
      if (j < d) acc[c] = acc[c] * correction + weight * Widen(value[j]);
    }
    running_max = new_max;
  }
  if (lane == 0) {
    warp_max[warp] = running_max;
    warp_sum[warp] = running_sum;
  }
#pragma unroll
  for (int c = 0; c < kValuesPerLane; ++c) {
    const int j = lane + c * kWarpSize;
    if (j < d) warp_values[warp][j] = acc[c];
  }
  __syncthreads();
  float overall_max = -INFINITY;
  for (int w = 0; w < kAttentionWarps; ++w) overall_max = fmaxf(overall_max, warp_max[w]);
  float denominator = 0.0f;
  for (int w = 0; w < kAttentionWarps; ++w) {
    denominator += warp_sum[w] * expf(warp_max[w] - overall_max);  // idle warps add 0
  }
  for (int j = threadIdx.x; j < d; j += blockDim.x) {
    float numerator = 0.0f;
    for (int w = 0; w < kAttentionWarps; ++w) {
      if (warp_sum[w] > 0.0f) numerator += warp_values[w][j] * expf(warp_max[w] - overall_max);
    }
    out_row[h * d + j] = numerator / denominator;
  }
}

template <typename Element>
__device__ void WriteHeadToCache(const SoftmaxAttentionParams& p, int row,
                                 const KvCache<Element>& cache, int h, int32_t position) {
  const int d = p.head_dim;
  const int64_t in_row = static_cast<int64_t>(row) * p.in_stride + h * d;
  const int64_t cache_row = position * cache.width + h * d;
  for (int j = threadIdx.x; j < d; j += blockDim.x) {
    cache.keys[cache_row + j] = Narrow<Element>(p.k[in_row + j]);
    cache.values[cache_row + j] = Narrow<Element>(p.v[in_row + j]);
  }
}

template <typename Element>
__global__ void SoftmaxStepKernel(SoftmaxAttentionParams p, StepTarget target) {
  // The output projection after this kernel may start issuing its weight loads.
  cuda::AllowDependentLaunch();
  const int h = blockIdx.x;
  const int row = blockIdx.y;
  const KvCache<Element> cache =
      CacheOf<Element>(p, cuda::LayerStateOf(target.state, target.slots[row]));
  const int32_t position = target.positions[row];
  WriteHeadToCache(p, row, cache, h, position);
  __syncthreads();
  AttendToCache(p, p.q + static_cast<int64_t>(row) * p.in_stride, cache, h, position,
                p.out + static_cast<int64_t>(row) * p.out_stride);
}

template <typename Element>
__global__ void SoftmaxPrefillWriteKernel(SoftmaxAttentionParams p, PrefillTarget target) {
  const int h = blockIdx.x;
  const int row = blockIdx.y;
  const KvCache<Element> cache = CacheOf<Element>(p, cuda::LayerStateOf(target.state, target.slot));
  WriteHeadToCache(p, row, cache, h, target.start_position + row);
}

template <typename Element>
__global__ void SoftmaxPrefillAttendKernel(SoftmaxAttentionParams p, PrefillTarget target) {
  const int h = blockIdx.x;
  const int row = blockIdx.y;
  const KvCache<Element> cache = CacheOf<Element>(p, cuda::LayerStateOf(target.state, target.slot));
  AttendToCache(p, p.q + static_cast<int64_t>(row) * p.in_stride, cache, h,
                target.start_position + row, p.out + static_cast<int64_t>(row) * p.out_stride);
}

void CheckHeadDim(const SoftmaxAttentionParams& p) {
  if (p.head_dim > kMaxHeadDim) {
    std::fprintf(stderr,
                 "slotserve: cuda softmax attention supports head_dim <= %d, got %d (d_model / "
                 "n_heads); use the cpu backend or more heads\n",
                 kMaxHeadDim, p.head_dim);
    std::abort();
  }
}

}  // namespace

template <>
void LaunchSoftmaxAttentionPrefill<Backend::kCuda>(const SoftmaxAttentionParams& p,
                                                   const PrefillTarget& target, Stream stream) {
  if (p.rows == 0) return;
  CheckHeadDim(p);
  const cudaStream_t s = cuda::AsCudaStream(stream);
  const dim3 grid(p.heads, p.rows);
  if (p.f16_cache) {
    SoftmaxPrefillWriteKernel<__half><<<grid, kAttentionThreads, 0, s>>>(p, target);
    SLOTSERVE_CUDA_CHECK_LAUNCH();
    SoftmaxPrefillAttendKernel<__half><<<grid, kAttentionThreads, 0, s>>>(p, target);
  } else {
    SoftmaxPrefillWriteKernel<float><<<grid, kAttentionThreads, 0, s>>>(p, target);
    SLOTSERVE_CUDA_CHECK_LAUNCH();
    SoftmaxPrefillAttendKernel<float><<<grid, kAttentionThreads, 0, s>>>(p, target);
  }
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

template <>
void LaunchSoftmaxAttentionStep<Backend::kCuda>(const SoftmaxAttentionParams& p,
                                                const StepTarget& target, Stream stream) {
  if (p.rows == 0) return;
  CheckHeadDim(p);
  const dim3 grid(p.heads, p.rows);
  const cudaStream_t s = cuda::AsCudaStream(stream);
  if (p.f16_cache) {
    SoftmaxStepKernel<__half><<<grid, kAttentionThreads, 0, s>>>(p, target);
  } else {
    SoftmaxStepKernel<float><<<grid, kAttentionThreads, 0, s>>>(p, target);
  }
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels
