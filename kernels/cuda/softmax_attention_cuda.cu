// CUDA causal softmax attention over the per-request KV cache (the baseline; layout in
// kernels/softmax_attention.h). One block per (query token, head); its warps take cached
// positions round-robin, each keeping an online softmax (running max, sum and weighted value
// accumulator in registers, so any context length works without a scores buffer), and the
// warps' partial results are merged at the end.
// Step: each block first writes its request's new k, v for its head at row `position`, then
// attends to rows 0..position. Prefill: one launch writes the chunk's k, v rows, a second
// attends with a block per (token, head).
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "kernels/cuda/recurrent_head.cuh"
#include "kernels/softmax_attention.h"

namespace slotserve::kernels {
namespace {

using cuda::kWarpSize;

constexpr int kAttentionThreads = 128;
constexpr int kAttentionWarps = kAttentionThreads / kWarpSize;
constexpr int kMaxHeadDim = 256;
constexpr int kValuesPerLane = kMaxHeadDim / kWarpSize;

struct KvCache {
  float* keys;    // [max_context x width]
  float* values;  // [max_context x width]
  int64_t width;  // heads * d
};

__device__ KvCache CacheOf(const SoftmaxAttentionParams& p, float* layer_state) {
  const int64_t width = static_cast<int64_t>(p.heads) * p.head_dim;
  return {layer_state, layer_state + p.max_context * width, width};
}

// out[h] = softmax(q_h K_h^T / sqrt(d)) V_h over cache rows 0..last_position.
__device__ void AttendToCache(const SoftmaxAttentionParams& p, const float* q_row,
                              const KvCache& cache, int h, int32_t last_position, float* out_row) {
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
    const float* key = cache.keys + s * cache.width + h * d;
    const float* value = cache.values + s * cache.width + h * d;
    float dot = 0.0f;
#pragma unroll
    for (int c = 0; c < kValuesPerLane; ++c) {
      const int j = lane + c * kWarpSize;
      if (j < d) dot += q[c] * key[j];
    }
    const float score = cuda::WarpSum(dot) * scale;
    const float new_max = fmaxf(running_max, score);
    const float correction = expf(running_max - new_max);  // 0 for the first position
    const float weight = expf(score - new_max);
    running_sum = running_sum * correction + weight;
#pragma unroll
    for (int c = 0; c < kValuesPerLane; ++c) {
      const int j = lane + c * kWarpSize;
      if (j < d) acc[c] = acc[c] * correction + weight * value[j];
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

__device__ void WriteHeadToCache(const SoftmaxAttentionParams& p, int row, const KvCache& cache,
                                 int h, int32_t position) {
  const int d = p.head_dim;
  const int64_t in_row = static_cast<int64_t>(row) * p.in_stride + h * d;
  const int64_t cache_row = position * cache.width + h * d;
  for (int j = threadIdx.x; j < d; j += blockDim.x) {
    cache.keys[cache_row + j] = p.k[in_row + j];
    cache.values[cache_row + j] = p.v[in_row + j];
  }
}

__global__ void SoftmaxStepKernel(SoftmaxAttentionParams p, StepTarget target) {
  const int h = blockIdx.x;
  const int row = blockIdx.y;
  const KvCache cache = CacheOf(p, cuda::LayerStateOf(target.state, target.slots[row]));
  const int32_t position = target.positions[row];
  WriteHeadToCache(p, row, cache, h, position);
  __syncthreads();
  AttendToCache(p, p.q + static_cast<int64_t>(row) * p.in_stride, cache, h, position,
                p.out + static_cast<int64_t>(row) * p.out_stride);
}

__global__ void SoftmaxPrefillWriteKernel(SoftmaxAttentionParams p, PrefillTarget target) {
  const int h = blockIdx.x;
  const int row = blockIdx.y;
  const KvCache cache = CacheOf(p, cuda::LayerStateOf(target.state, target.slot));
  WriteHeadToCache(p, row, cache, h, target.start_position + row);
}

__global__ void SoftmaxPrefillAttendKernel(SoftmaxAttentionParams p, PrefillTarget target) {
  const int h = blockIdx.x;
  const int row = blockIdx.y;
  const KvCache cache = CacheOf(p, cuda::LayerStateOf(target.state, target.slot));
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
  SoftmaxPrefillWriteKernel<<<grid, kAttentionThreads, 0, s>>>(p, target);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
  SoftmaxPrefillAttendKernel<<<grid, kAttentionThreads, 0, s>>>(p, target);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

template <>
void LaunchSoftmaxAttentionStep<Backend::kCuda>(const SoftmaxAttentionParams& p,
                                                const StepTarget& target, Stream stream) {
  if (p.rows == 0) return;
  CheckHeadDim(p);
  SoftmaxStepKernel<<<dim3(p.heads, p.rows), kAttentionThreads, 0, cuda::AsCudaStream(stream)>>>(
      p, target);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels
