// CUDA layer norm: one block per row; mean first, then the biased variance of (x - mean) (two
// passes, so no catastrophic cancellation), both reduced across the block.
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/reductions.cuh"
#include "kernels/layer_norm.h"

namespace slotserve::kernels {
namespace {

constexpr int kLayerNormThreads = 256;

__global__ void LayerNormKernel(const float* x, int64_t x_stride, const float* __restrict__ gamma,
                                const float* __restrict__ beta, float* y, int64_t y_stride, int dim,
                                float eps) {
  __shared__ float scratch[cuda::kWarpSize];
  // x and y may alias: every thread reads all of its elements (in both passes) before the
  // block-wide reductions, and then writes only those same elements.
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

}  // namespace

template <>
void LaunchLayerNorm<Backend::kCuda>(const LayerNormParams& p, Stream stream) {
  if (p.rows == 0) return;
  LayerNormKernel<<<p.rows, kLayerNormThreads, 0, cuda::AsCudaStream(stream)>>>(
      p.x, p.x_stride, p.gamma, p.beta, p.y, p.y_stride, p.dim, p.eps);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels
