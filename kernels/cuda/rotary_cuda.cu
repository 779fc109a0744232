// CUDA rotary embedding: one thread per (row, frequency), looping over the heads. The
// frequency, angle and sin/cos are in double as on the host backends (a float angle would be
// off by ~1e-4 at positions in the thousands); the rotation is in float.
#include <cmath>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/launch_shape.cuh"
#include "kernels/rotary.h"

namespace slotserve::kernels {
namespace {

__global__ void RotaryKernel(float* __restrict__ x, int64_t stride,
                             const int32_t* __restrict__ positions, int rows, int heads,
                             int head_dim, double base) {
  const int half = head_dim / 2;
  const int64_t count = static_cast<int64_t>(rows) * half;
  for (int64_t index = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = index / half;
    const int i = static_cast<int>(index % half);
    const double theta = pow(base, -2.0 * i / head_dim);
    double sine, cosine;
    sincos(positions[row] * theta, &sine, &cosine);
    const float s = static_cast<float>(sine), c = static_cast<float>(cosine);
    float* target = x + row * stride + i;
    for (int h = 0; h < heads; ++h, target += head_dim) {
      const float a = target[0], b = target[half];
      target[0] = a * c - b * s;
      target[half] = b * c + a * s;
    }
  }
}

}  // namespace

template <>
void LaunchRotary<Backend::kCuda>(const RotaryParams& p, Stream stream) {
  const int64_t count = static_cast<int64_t>(p.rows) * (p.head_dim / 2);
  if (count == 0 || p.heads == 0) return;
  RotaryKernel<<<cuda::ElementwiseBlocks(count), cuda::kElementwiseThreads, 0,
                 cuda::AsCudaStream(stream)>>>(p.x, p.stride, p.positions, p.rows, p.heads,
                                               p.head_dim, static_cast<double>(p.base));
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels
