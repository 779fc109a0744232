// CUDA element-wise activations in place; GELU uses the exact erf form like the reference.
#include "kernels/activation.h"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/launch_shape.cuh"

namespace slotserve::kernels {
namespace {

template <Activation kActivation>
__global__ void ActivationKernel(float* __restrict__ x, int64_t stride, int rows, int cols) {
  const int64_t count = static_cast<int64_t>(rows) * cols;
  for (int64_t index = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float* element = x + (index / cols) * stride + index % cols;
    const float u = *element;
    if constexpr (kActivation == Activation::kGelu) {
      *element = 0.5f * u * (1.0f + erff(u * 0.70710678118654752f));
    } else {
      *element = u > 0.0f ? u : 0.0f;
    }
  }
}

}  // namespace

template <>
void LaunchActivation<Backend::kCuda>(const ActivationParams& p, Stream stream) {
  if (p.rows == 0 || p.cols == 0) return;
  const unsigned blocks = cuda::ElementwiseBlocks(static_cast<int64_t>(p.rows) * p.cols);
  const cudaStream_t s = cuda::AsCudaStream(stream);
  switch (p.activation) {
    case Activation::kGelu:
      ActivationKernel<Activation::kGelu>
          <<<blocks, cuda::kElementwiseThreads, 0, s>>>(p.x, p.stride, p.rows, p.cols);
      break;
    case Activation::kRelu:
      ActivationKernel<Activation::kRelu>
          <<<blocks, cuda::kElementwiseThreads, 0, s>>>(p.x, p.stride, p.rows, p.cols);
      break;
  }
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels
