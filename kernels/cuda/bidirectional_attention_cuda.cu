// CUDA unmasked attention over one sequence (the encoder's): one warp per (row, head) walks
// every row's key and value with an online softmax.
#include "kernels/bidirectional_attention.h"
#include "kernels/cuda/attend_rows.cuh"
#include "kernels/cuda/cuda_check.cuh"

namespace slotserve::kernels {
namespace {

__global__ void BidirectionalAttentionKernel(BidirectionalAttentionParams p) {
  const int h = blockIdx.x;
  const int row = blockIdx.y;
  const int d = p.head_dim;
  cuda::WarpAttendRows(p.q + row * p.in_stride + h * d, p.k + h * d, p.v + h * d, p.in_stride,
                       p.rows, d, p.out + row * p.out_stride + h * d);
}

}  // namespace

template <>
void LaunchBidirectionalAttention<Backend::kCuda>(const BidirectionalAttentionParams& p,
                                                  Stream stream) {
  if (p.rows == 0) return;
  cuda::CheckAttendRowsHeadDim("bidirectional attention", p.head_dim);
  BidirectionalAttentionKernel<<<dim3(p.heads, p.rows), cuda::kWarpSize, 0,
                                 cuda::AsCudaStream(stream)>>>(p);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels
