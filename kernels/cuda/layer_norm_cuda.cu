// CUDA layer norm: one block per row; mean first, then the biased variance of (x - mean) (two
// passes, so no catastrophic cancellation), both reduced across the block. Rows up to
// kMaxRegisterRowThreads * kRegisterRowLarge wide are held in registers (register_row.cuh), so
// the row is read from memory once; wider rows are re-read by a strided loop in each pass.
// Launched to overlap the kernel before (programmatic_launch.cuh): each block waits for it
// before reading x.
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/programmatic_launch.cuh"
#include "kernels/cuda/reductions.cuh"
#include "kernels/cuda/register_row.cuh"
#include "kernels/layer_norm.h"

namespace slotserve::kernels {
namespace {

constexpr int kLoopThreads = 256;

// x and y may alias in both kernels: every thread reads all of its elements before the
// block-wide reductions, and then writes only those same elements.
template <int kPerThread>
__global__ void LayerNormRegisterKernel(const float* x, int64_t x_stride,
                                        const float* __restrict__ gamma,
                                        const float* __restrict__ beta, float* y, int64_t y_stride,
                                        int dim, float eps) {
  __shared__ float scratch[cuda::kWarpSize];
  cuda::WaitForPrecedingKernel();
  cuda::AllowDependentLaunch();
  cuda::RegisterRow<kPerThread> row;
  row.Load(x + blockIdx.x * x_stride, dim, [](float v) { return v; });
  const float mean = cuda::BlockSum(row.Sum(dim, [](float v) { return v; }), scratch) / dim;
  const float squares = row.Sum(dim, [mean](float v) { return (v - mean) * (v - mean); });
  const float inv_std = rsqrtf(cuda::BlockSum(squares, scratch) / dim + eps);
  float* out = y + blockIdx.x * y_stride;
  row.ForEach(dim, [&](int c, float v) { out[c] = (v - mean) * inv_std * gamma[c] + beta[c]; });
}

__global__ void LayerNormLoopKernel(const float* x, int64_t x_stride,
                                    const float* __restrict__ gamma, const float* __restrict__ beta,
                                    float* y, int64_t y_stride, int dim, float eps) {
  __shared__ float scratch[cuda::kWarpSize];
  cuda::WaitForPrecedingKernel();
  cuda::AllowDependentLaunch();
  const float* in = x + blockIdx.x * x_stride;
  float* out = y + blockIdx.x * y_stride;
  float sum = 0.0f;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) sum += in[c];
  const float mean = cuda::BlockSum(sum, scratch) / dim;
  float squares = 0.0f;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) {
    const float centred = in[c] - mean;
    squares += centred * centred;
  }
  const float variance = cuda::BlockSum(squares, scratch) / dim;
  const float inv_std = rsqrtf(variance + eps);
  for (int c = threadIdx.x; c < dim; c += blockDim.x) {
    out[c] = (in[c] - mean) * inv_std * gamma[c] + beta[c];
  }
}

template <int kPerThread>
void LaunchRegisterKernel(const LayerNormParams& p, cudaStream_t stream) {
  cuda::LaunchOverlappingPreceding(LayerNormRegisterKernel<kPerThread>, dim3(p.rows),
                                   dim3(cuda::RegisterRowThreads(p.dim, kPerThread)), 0, stream,
                                   p.x, p.x_stride, p.gamma, p.beta, p.y, p.y_stride, p.dim, p.eps);
}

}  // namespace

template <>
void LaunchLayerNorm<Backend::kCuda>(const LayerNormParams& p, Stream stream) {
  if (p.rows == 0) return;
  const cudaStream_t s = cuda::AsCudaStream(stream);
  if (p.dim <= cuda::kMaxRegisterRowThreads * cuda::kRegisterRowSmall) {
    LaunchRegisterKernel<cuda::kRegisterRowSmall>(p, s);
  } else if (p.dim <= cuda::kMaxRegisterRowThreads * cuda::kRegisterRowLarge) {
    LaunchRegisterKernel<cuda::kRegisterRowLarge>(p, s);
  } else {
    cuda::LaunchOverlappingPreceding(LayerNormLoopKernel, dim3(p.rows), dim3(kLoopThreads), 0, s,
                                     p.x, p.x_stride, p.gamma, p.beta, p.y, p.y_stride, p.dim,
                                     p.eps);
  }
}

}  // namespace slotserve::kernels
