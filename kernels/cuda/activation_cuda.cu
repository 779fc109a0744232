// CUDA element-wise activations in place; GELU uses the exact erf form like the reference.
// Launched to overlap the kernel before (programmatic_launch.cuh): every thread waits for it
// first.
#include "kernels/activation.h"
#include "kernels/cuda/activation_functions.cuh"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/launch_shape.cuh"
#include "kernels/cuda/programmatic_launch.cuh"

namespace slotserve::kernels {
namespace {

template <Activation kActivation>
__global__ void ActivationKernel(float* __restrict__ x, int64_t stride, int rows, int cols) {
  cuda::WaitForPrecedingKernel();
  cuda::AllowDependentLaunch();
  const int64_t count = static_cast<int64_t>(rows) * cols;
  for (int64_t index = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float* element = x + (index / cols) * stride + index % cols;
    *element = cuda::Activate<kActivation>(*element);
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
      cuda::LaunchOverlappingPreceding(ActivationKernel<Activation::kGelu>, dim3(blocks),
                                       dim3(cuda::kElementwiseThreads), 0, s, p.x, p.stride, p.rows,
                                       p.cols);
      break;
    case Activation::kRelu:
      cuda::LaunchOverlappingPreceding(ActivationKernel<Activation::kRelu>, dim3(blocks),
                                       dim3(cuda::kElementwiseThreads), 0, s, p.x, p.stride, p.rows,
                                       p.cols);
      break;
  }
}

}  // namespace slotserve::kernels
