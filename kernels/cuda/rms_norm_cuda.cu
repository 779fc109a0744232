// CUDA RMS norm: one block per (row, group), sized to the group (a warp for a small head); the
// sum of squares reduced across the block with the fixed tree of reductions.cuh. Groups up to
// kMaxRegisterRowThreads * kRegisterRowLarge wide are held in registers (register_row.cuh), so
// the input is read from memory once; wider groups are re-read by a strided loop. Launched to
// overlap the kernel before (programmatic_launch.cuh): each block waits for it first.
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/programmatic_launch.cuh"
#include "kernels/cuda/reductions.cuh"
#include "kernels/cuda/register_row.cuh"
#include "kernels/rms_norm.h"

namespace slotserve::kernels {
namespace {

constexpr int kLoopThreads = 256;

__device__ __forceinline__ float Silu(float x) { return x / (1.0f + expf(-x)); }

// The block's (row, group) in and out pointers and the final scaling of one element. x and y
// may alias: every thread reads its own elements before the block-wide reduction (which
// synchronises) and afterwards writes only those same elements.
struct RmsNormBlock {
  const float* in;
  float* out;
  const float* gate_row;

  __device__ explicit RmsNormBlock(const RmsNormParams& a) {
    const int row = blockIdx.x / a.groups;
    const int64_t first = static_cast<int64_t>(blockIdx.x % a.groups) * a.group_dim;
    in = a.x + row * a.x_stride + first;
    out = a.y + row * a.y_stride + first;
    gate_row = a.gate != nullptr ? a.gate + row * a.gate_stride + first : nullptr;
  }

  __device__ __forceinline__ void Store(const RmsNormParams& a, int c, float u,
                                        float inv_rms) const {
    float value = u * inv_rms;
    if (a.weight != nullptr) value *= a.weight[c];
    if (gate_row != nullptr) value *= Silu(gate_row[c]);
    out[c] = value;
  }
};

template <int kPerThread>
__global__ void RmsNormRegisterKernel(RmsNormParams a) {
  __shared__ float scratch[cuda::kWarpSize];
  cuda::WaitForPrecedingKernel();
  cuda::AllowDependentLaunch();
  const RmsNormBlock block(a);
  cuda::RegisterRow<kPerThread> row;
  const bool silu = a.silu_input;
  row.Load(block.in, a.group_dim, [silu](float v) { return silu ? Silu(v) : v; });
  const float squares = row.Sum(a.group_dim, [](float u) { return u * u; });
  const float inv_rms = rsqrtf(cuda::BlockSum(squares, scratch) / a.group_dim + a.eps);
  row.ForEach(a.group_dim, [&](int c, float u) { block.Store(a, c, u, inv_rms); });
}

__global__ void RmsNormLoopKernel(RmsNormParams a) {
  __shared__ float scratch[cuda::kWarpSize];
  cuda::WaitForPrecedingKernel();
  cuda::AllowDependentLaunch();
  const RmsNormBlock block(a);
  float squares = 0.0f;
  for (int c = threadIdx.x; c < a.group_dim; c += blockDim.x) {
    const float u = a.silu_input ? Silu(block.in[c]) : block.in[c];
    squares += u * u;
  }
  const float inv_rms = rsqrtf(cuda::BlockSum(squares, scratch) / a.group_dim + a.eps);
  for (int c = threadIdx.x; c < a.group_dim; c += blockDim.x) {
    block.Store(a, c, a.silu_input ? Silu(block.in[c]) : block.in[c], inv_rms);
  }
}

}  // namespace

template <>
void LaunchRmsNorm<Backend::kCuda>(const RmsNormParams& p, Stream stream) {
  if (p.rows == 0 || p.groups == 0 || p.group_dim == 0) return;
  const unsigned blocks = static_cast<unsigned>(static_cast<int64_t>(p.rows) * p.groups);
  const cudaStream_t s = cuda::AsCudaStream(stream);
  using cuda::RegisterRowThreads;
  if (p.group_dim <= cuda::kMaxRegisterRowThreads * cuda::kRegisterRowSmall) {
    constexpr int kPerThread = cuda::kRegisterRowSmall;
    cuda::LaunchOverlappingPreceding(RmsNormRegisterKernel<kPerThread>, dim3(blocks),
                                     dim3(RegisterRowThreads(p.group_dim, kPerThread)), 0, s, p);
  } else if (p.group_dim <= cuda::kMaxRegisterRowThreads * cuda::kRegisterRowLarge) {
    constexpr int kPerThread = cuda::kRegisterRowLarge;
    cuda::LaunchOverlappingPreceding(RmsNormRegisterKernel<kPerThread>, dim3(blocks),
                                     dim3(RegisterRowThreads(p.group_dim, kPerThread)), 0, s, p);
  } else {
    cuda::LaunchOverlappingPreceding(RmsNormLoopKernel, dim3(blocks), dim3(kLoopThreads), 0, s, p);
  }
}

}  // namespace slotserve::kernels
