// CUDA sinusoidal positions. The angle is computed in double, as in the reference: with
// positions in the thousands a float angle would already be off by ~1e-4.
#include <cmath>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/launch_shape.cuh"
#include "kernels/positions.h"

namespace slotserve::kernels {
namespace {

__global__ void AddPositionsKernel(float* __restrict__ x, int64_t stride,
                                   const int32_t* __restrict__ positions, int rows, int half) {
  const int64_t count = static_cast<int64_t>(rows) * half;
  const double log_base = log(10000.0) / (half - 1);
  for (int64_t index = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int row = static_cast<int>(index / half);
    const int j = static_cast<int>(index % half);
    const double frequency = exp(-j * log_base);
    double sine, cosine;
    sincos(positions[row] * frequency, &sine, &cosine);
    float* target = x + row * stride;
    target[j] = static_cast<float>(target[j] + sine);
    target[half + j] = static_cast<float>(target[half + j] + cosine);
  }
}

}  // namespace

template <>
void LaunchAddPositions<Backend::kCuda>(const AddPositionsParams& p, Stream stream) {
  if (p.rows == 0) return;
  const int half = p.dim / 2;
  AddPositionsKernel<<<cuda::ElementwiseBlocks(static_cast<int64_t>(p.rows) * half),
                       cuda::kElementwiseThreads, 0, cuda::AsCudaStream(stream)>>>(
      p.x, p.stride, p.positions, p.rows, half);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels
