// CUDA RMS norm: one block per (row, group), sized to the group (a warp for a small head, at
// most 256 threads); the sum of squares reduced across the block with the fixed tree of
// reductions.cuh.
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/reductions.cuh"
#include "kernels/rms_norm.h"

namespace slotserve::kernels {
namespace {

constexpr int kMaxRmsNormThreads = 256;

__device__ __forceinline__ float Silu(float x) { return x / (1.0f + expf(-x)); }

__global__ void RmsNormKernel(const float* x, int64_t x_stride, float* y, int64_t y_stride,
                              int groups, int group_dim, const float* __restrict__ weight,
                              float eps, bool silu_input, const float* __restrict__ gate,
                              int64_t gate_stride) {
  __shared__ float scratch[cuda::kWarpSize];
  const int row = blockIdx.x / groups;
  const int64_t first = static_cast<int64_t>(blockIdx.x % groups) * group_dim;
  // x and y may alias: every thread reads its own elements before the block-wide reduction
  // (which synchronises) and afterwards writes only those same elements.
  const float* in = x + row * x_stride + first;
  float* out = y + row * y_stride + first;
  float squares = 0.0f;
  for (int c = threadIdx.x; c < group_dim; c += blockDim.x) {
    const float u = silu_input ? Silu(in[c]) : in[c];
    squares += u * u;
  }
  const float inv_rms = rsqrtf(cuda::BlockSum(squares, scratch) / group_dim + eps);
  const float* gate_row = gate != nullptr ? gate + row * gate_stride + first : nullptr;
  for (int c = threadIdx.x; c < group_dim; c += blockDim.x) {
    float value = (silu_input ? Silu(in[c]) : in[c]) * inv_rms;
    if (weight != nullptr) value *= weight[c];
    if (gate_row != nullptr) value *= Silu(gate_row[c]);
    out[c] = value;
  }
}

}  // namespace

template <>
void LaunchRmsNorm<Backend::kCuda>(const RmsNormParams& p, Stream stream) {
  if (p.rows == 0 || p.groups == 0 || p.group_dim == 0) return;
  const int warps = (p.group_dim + cuda::kWarpSize - 1) / cuda::kWarpSize;
  const int threads =
      warps * cuda::kWarpSize < kMaxRmsNormThreads ? warps * cuda::kWarpSize : kMaxRmsNormThreads;
  const unsigned blocks = static_cast<unsigned>(static_cast<int64_t>(p.rows) * p.groups);
  RmsNormKernel<<<blocks, threads, 0, cuda::AsCudaStream(stream)>>>(
      p.x, p.x_stride, p.y, p.y_stride, p.groups, p.group_dim, p.weight, p.eps, p.silu_input,
      p.gate, p.gate_stride);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels
