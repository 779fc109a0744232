// CUDA source filter (kernels/source_filter.h): one thread per output element.
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/source_filter.h"

namespace slotserve::kernels {
namespace {

constexpr int kThreads = 128;

__global__ void SourceFilterKernel(SourceFilterParams p) {
  const int r = blockIdx.y;
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= p.columns) return;
  const int start = r * p.stride;
  const int taps = min(p.kernel, p.positions - start);
  float result = p.maxpool ? -INFINITY : p.bias[0];
  for (int u = 0; u < taps; ++u) {
    const float x = p.in[(start + u) * p.in_stride + c];
    result = p.maxpool ? fmaxf(result, x) : fmaf(p.weight[u], x, result);
  }
  p.out[r * p.out_stride + c] = result;
}

}  // namespace

template <>
void LaunchSourceFilter<Backend::kCuda>(const SourceFilterParams& p, Stream stream) {
  if (p.positions == 0 || p.columns == 0) return;
  const dim3 grid((p.columns + kThreads - 1) / kThreads, FilteredRows(p.positions, p.stride));
  SourceFilterKernel<<<grid, kThreads, 0, cuda::AsCudaStream(stream)>>>(p);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels
