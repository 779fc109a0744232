// CUDA RFA cross read (kernels/rfa_cross_read.h): a block per (request, head) forms φ(q) in
// shared memory (a thread per feature), reduces φ(q)·z, and gives each output column to a
// thread. The memory is only read.
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/reductions.cuh"
#include "kernels/rfa_cross_read.h"

namespace slotserve::kernels {
namespace {

constexpr int kThreads = 128;

__global__ void RfaCrossReadKernel(RfaParams p, StepTarget target) {
  extern __shared__ float phi[];  // [2D]
  __shared__ float scratch[kThreads / cuda::kWarpSize];
  const int h = blockIdx.x;
  const int row = blockIdx.y;
  const int d = p.head_dim;
  const int features = p.features;
  const int width = 2 * features;
  const int64_t head_floats = static_cast<int64_t>(width) * d + width;
  const float* sums = target.state.pool +
                      static_cast<int64_t>(target.slots[row]) * target.state.slot_stride +
                      target.state.layer_offset + h * head_floats;
  const float* z = sums + static_cast<int64_t>(width) * d;
  const float* q = p.q + row * p.in_stride + h * d;
  float partial = 0.0f;
  for (int i = threadIdx.x; i < d; i += blockDim.x) partial += q[i] * q[i];
  const float inverse_norm = 1.0f / (sqrtf(cuda::BlockSum(partial, scratch)) + p.norm_eps);
  const float* projection = p.projection + static_cast<int64_t>(h) * features * d;
  for (int f = threadIdx.x; f < features; f += blockDim.x) {
    float angle = 0.0f;
    for (int i = 0; i < d; ++i) angle += projection[f * d + i] * q[i];
    angle *= inverse_norm;
    phi[p.interleave ? 2 * f : f] = p.feature_scale * sinf(angle);
    phi[p.interleave ? 2 * f + 1 : features + f] = p.feature_scale * cosf(angle);
  }
  __syncthreads();
  partial = 0.0f;
  for (int f = threadIdx.x; f < width; f += blockDim.x) partial += phi[f] * z[f];
  const float denominator = fmaxf(cuda::BlockSum(partial, scratch), p.eps);
  for (int i = threadIdx.x; i < d; i += blockDim.x) {
    float numerator = 0.0f;
    for (int f = 0; f < width; ++f) numerator += phi[f] * sums[static_cast<int64_t>(f) * d + i];
    p.out[row * p.out_stride + h * d + i] = numerator / denominator;
  }
}

}  // namespace

template <>
void LaunchRfaCrossRead<Backend::kCuda>(const RfaParams& p, const StepTarget& target,
                                        Stream stream) {
  if (p.rows == 0) return;
  const size_t shared_bytes = 2 * static_cast<size_t>(p.features) * sizeof(float);
  RfaCrossReadKernel<<<dim3(p.heads, p.rows), kThreads, shared_bytes, cuda::AsCudaStream(stream)>>>(
      p, target);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels
