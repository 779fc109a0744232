// CUDA linear over int8 weights (W[o, i] = q[o, i] * scale[o]), kept int8 in memory.
//
// Decode batches (up to kGemvRows rows): a dequantising GEMV — one warp per output feature,
// its lanes striding over the row in 4-byte groups (char4), each weight group widened once and
// multiplied into the partial sums of every input row, then a warp reduction; the row's scale
// multiplies the finished dot product, the bias and the residual are added in the same pass.
// The weights are read once per step, which is what bounds decode.
//
// Larger batches (prefill): W is dequantised to F32 in blocks of output rows into the stream's
// scratch and each block goes through one fp32 cublasGemmEx (no TF32), so the products are the
// F32 path's; the bias kernel follows.
#include <algorithm>
#include <cstdint>

#include "kernels/cuda/cublas_context.cuh"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/int8_linear.cuh"
#include "kernels/cuda/launch_shape.cuh"
#include "kernels/cuda/reductions.cuh"
#include "kernels/cuda/stream_scratch.cuh"

namespace slotserve::kernels::cuda {
namespace {

constexpr int kGemvRows = 8;
constexpr int kWarpsPerBlock = 4;
// Bound on the dequantised block of W for the GEMM path.
constexpr std::size_t kMaxScratchBytes = 64u << 20;

template <int kRows>
__global__ void Int8GemvKernel(LinearParams p, int first_row) {
  const int warp = threadIdx.x / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  const int o = blockIdx.x * kWarpsPerBlock + warp;
  if (o >= p.out_features) return;
  const int8_t* w = static_cast<const int8_t*>(p.weight) + static_cast<int64_t>(o) * p.in_features;
  float sum[kRows];
  for (int r = 0; r < kRows; ++r) sum[r] = 0.0f;
  const float* x = p.x + static_cast<int64_t>(first_row) * p.x_stride;
  for (int i = lane; i < p.in_features; i += kWarpSize) {
    const float wi = static_cast<float>(w[i]);
#pragma unroll
    for (int r = 0; r < kRows; ++r) sum[r] += wi * x[r * p.x_stride + i];
  }
  const float scale = p.weight_scale[o];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float total = WarpSum(sum[r]);
    if (lane == 0) {
      float value = total * scale;
      if (p.bias != nullptr) value += p.bias[o];
      float* y = p.y + static_cast<int64_t>(first_row + r) * p.y_stride + o;
      *y = p.accumulate ? *y + value : value;
    }
  }
}

template <int kRows>
void LaunchGemv(const LinearParams& p, int first_row, cudaStream_t stream) {
  const int blocks = (p.out_features + kWarpsPerBlock - 1) / kWarpsPerBlock;
  Int8GemvKernel<kRows><<<blocks, kWarpsPerBlock * kWarpSize, 0, stream>>>(p, first_row);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

// Rows [first, first + count), count <= kGemvRows, as one launch.
void Gemv(const LinearParams& p, int first, int count, cudaStream_t stream) {
  switch (count) {
    case 1:
      return LaunchGemv<1>(p, first, stream);
    case 2:
      return LaunchGemv<2>(p, first, stream);
    case 3:
      return LaunchGemv<3>(p, first, stream);
    case 4:
      return LaunchGemv<4>(p, first, stream);
    case 5:
      return LaunchGemv<5>(p, first, stream);
    case 6:
      return LaunchGemv<6>(p, first, stream);
    case 7:
      return LaunchGemv<7>(p, first, stream);
    default:
      return LaunchGemv<8>(p, first, stream);
  }
}

// out[r, i] = q[o_begin + r, i] * scale[o_begin + r] for `rows` output rows.
__global__ void DequantiseRowsKernel(const int8_t* __restrict__ q, const float* __restrict__ scale,
                                     int o_begin, int rows, int in_features,
                                     float* __restrict__ out) {
  const int64_t count = static_cast<int64_t>(rows) * in_features;
  const int8_t* source = q + static_cast<int64_t>(o_begin) * in_features;
  for (int64_t index = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[index] = static_cast<float>(source[index]) * scale[o_begin + index / in_features];
  }
}

__global__ void AddBiasRowsKernel(float* __restrict__ y, int64_t y_stride,
                                  const float* __restrict__ bias, int rows, int out_features) {
  const int64_t count = static_cast<int64_t>(rows) * out_features;
  for (int64_t index = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    y[(index / out_features) * y_stride + index % out_features] += bias[index % out_features];
  }
}

void DequantisedGemm(const LinearParams& p, cudaStream_t stream) {
  const std::size_t row_bytes = sizeof(float) * static_cast<std::size_t>(p.in_features);
  const int block_rows = static_cast<int>(
      std::clamp<std::size_t>(kMaxScratchBytes / std::max<std::size_t>(row_bytes, 1), 1,
                              static_cast<std::size_t>(p.out_features)));
  float* block = static_cast<float*>(StreamScratch(stream, row_bytes * block_rows));
  const cublasHandle_t handle = CublasHandleOn(stream);
  const float alpha = 1.0f;
  const float beta = p.accumulate ? 1.0f : 0.0f;
  for (int o = 0; o < p.out_features; o += block_rows) {
    const int rows = std::min(block_rows, p.out_features - o);
    const int64_t count = static_cast<int64_t>(rows) * p.in_features;
    DequantiseRowsKernel<<<ElementwiseBlocks(count), kElementwiseThreads, 0, stream>>>(
        static_cast<const int8_t*>(p.weight), p.weight_scale, o, rows, p.in_features, block);
    SLOTSERVE_CUDA_CHECK_LAUNCH();
    // Column-major y^T[o .. o + rows, :] = block^T(op T) * x^T, as linear_cuda.cu's F32 path.
    SLOTSERVE_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, rows, p.rows,
                                        p.in_features, &alpha, block, CUDA_R_32F, p.in_features,
                                        p.x, CUDA_R_32F, p.x_stride, &beta, p.y + o, CUDA_R_32F,
                                        p.y_stride, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
  if (p.bias != nullptr) {
    const int64_t count = static_cast<int64_t>(p.rows) * p.out_features;
    AddBiasRowsKernel<<<ElementwiseBlocks(count), kElementwiseThreads, 0, stream>>>(
        p.y, p.y_stride, p.bias, p.rows, p.out_features);
    SLOTSERVE_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

void LinearInt8(const LinearParams& p, cudaStream_t stream) {
  if (p.rows > 2 * kGemvRows) return DequantisedGemm(p, stream);
  for (int first = 0; first < p.rows; first += kGemvRows) {
    Gemv(p, first, std::min(kGemvRows, p.rows - first), stream);
  }
}

}  // namespace slotserve::kernels::cuda
