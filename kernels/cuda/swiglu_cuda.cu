// CUDA SwiGLU: grid-stride, silu(gate) * up with the accurate expf.
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/launch_shape.cuh"
#include "kernels/swiglu.h"

namespace slotserve::kernels {
namespace {

// No __restrict__: out may alias gate; each element is read before it is written.
__global__ void SwiGluKernel(const float* gate, const float* up, int64_t in_stride, float* out,
                             int64_t out_stride, int rows, int cols) {
  const int64_t count = static_cast<int64_t>(rows) * cols;
  for (int64_t index = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = index / cols, col = index % cols;
    const float g = gate[row * in_stride + col];
    const float u = up[row * in_stride + col];
    out[row * out_stride + col] = g / (1.0f + expf(-g)) * u;
  }
}

}  // namespace

template <>
void LaunchSwiGlu<Backend::kCuda>(const SwiGluParams& p, Stream stream) {
  if (p.rows == 0 || p.cols == 0) return;
  SwiGluKernel<<<cuda::ElementwiseBlocks(static_cast<int64_t>(p.rows) * p.cols),
                 cuda::kElementwiseThreads, 0, cuda::AsCudaStream(stream)>>>(
      p.gate, p.up, p.in_stride, p.out, p.out_stride, p.rows, p.cols);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels
