// CUDA attention over a slot's memory rows (layout in kernels/memory_attention.h): one warp
// per (request, head) walks the memory with an online softmax.
#include "kernels/cuda/attend_rows.cuh"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/memory_attention.h"

namespace slotserve::kernels {
namespace {

__global__ void MemoryAttentionKernel(MemoryAttentionParams p, StepTarget target) {
  const int h = blockIdx.x;
  const int row = blockIdx.y;
  const int d = p.head_dim;
  const int64_t width = static_cast<int64_t>(p.heads) * d;
  const float* slot =
      target.state.pool + static_cast<int64_t>(target.slots[row]) * target.state.slot_stride;
  const float* keys = slot + target.state.layer_offset;
  const float* values = keys + p.capacity * width;
  const int n = p.length_offset < 0 ? p.capacity : static_cast<int>(slot[p.length_offset]);
  cuda::WarpAttendRows(p.q + row * p.q_stride + h * d, keys + h * d, values + h * d, width, n, d,
                       p.out + row * p.out_stride + h * d);
}

}  // namespace

template <>
void LaunchMemoryAttention<Backend::kCuda>(const MemoryAttentionParams& p, const StepTarget& target,
                                           Stream stream) {
  if (p.rows == 0) return;
  cuda::CheckAttendRowsHeadDim("memory attention", p.head_dim);
  MemoryAttentionKernel<<<dim3(p.heads, p.rows), cuda::kWarpSize, 0, cuda::AsCudaStream(stream)>>>(
      p, target);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels
