// CUDA linear through cuBLAS, y = x W^T + b (+ y), with W in PyTorch's [out, in] layout.
//
// Row-major y [rows, out] is column-major y^T [out, rows], so every call is the column-major
// GEMM  y^T = W^T(op T on the column-major [in, out] view of W) * x^T.
//
// F32 weights: one cublasGemmEx in full fp32 (CUBLAS_COMPUTE_32F, no TF32), beta = 1 when
// accumulating, then a bias kernel.
//
// F16/BF16 weights, up to kNarrowGemvMaxRows rows: narrow_weight_gemv_cuda.cu (weights widened
// exactly, fp32 sums; it reads the weights at close to the memory's bandwidth).
//
// F16/BF16 weights, more rows: cuBLAS has no GEMM that mixes 16-bit weights with fp32
// activations, and rounding x to 16 bits would cost ~1e-3 (F16) or ~4e-3 (BF16) relative
// error. Instead x is split into pieces, x = hi + lo (F16) or hi + mid + lo (BF16), each the
// 16-bit rounding of what the pieces before it left, stacked as pieces*rows columns of ONE
// tensor-core GEMM (the weights are read once), and an epilogue adds the pieces' products, the
// bias and the residual: y = W.hi + W.lo (+ W.mid) + b (+ y). That keeps about 22 (F16, two
// 11-bit pieces) or 24 (BF16, three 8-bit pieces) bits of x, all of fp32's 24, so the result
// matches the fp32 reference to ~1e-6 relative while the weights stay 16-bit in memory. (Two
// BF16 pieces, 16 bits, were 15 times further from the reference than the cpu backend on an
// fla ABC checkpoint: 2.3e-4 in its logits.) F16 needs |x| < 65504.
//
// I8 weights (per-output-row scales): int8_linear_cuda.cu.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/cublas_context.cuh"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/int8_linear.cuh"
#include "kernels/cuda/launch_shape.cuh"
#include "kernels/cuda/narrow_weight_gemv.cuh"
#include "kernels/cuda/stream_scratch.cuh"
#include "kernels/cuda/widen.cuh"
#include "kernels/linear.h"

namespace slotserve::kernels {
namespace {

// Bound on the scratch of the 16-bit path; larger inputs are processed in row chunks.
constexpr std::size_t kMaxScratchBytes = 64u << 20;

__global__ void AddBiasKernel(float* __restrict__ y, int64_t y_stride,
                              const float* __restrict__ bias, int rows, int out_features) {
  const int64_t count = static_cast<int64_t>(rows) * out_features;
  for (int64_t index = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = index / out_features;
    const int o = static_cast<int>(index % out_features);
    y[row * y_stride + o] += bias[o];
  }
}

template <typename T>
__device__ __forceinline__ T Narrow(float value);
template <>
__device__ __forceinline__ __half Narrow(float value) {
  return __float2half_rn(value);
}
template <>
__device__ __forceinline__ __nv_bfloat16 Narrow(float value) {
  return __float2bfloat16_rn(value);
}
using cuda::Widen;

// 16-bit pieces of x that hold all of fp32's 24 significant bits (22 for F16's two).
template <typename T>
constexpr int kPieces = 2;
template <>
constexpr int kPieces<__nv_bfloat16> = 3;

// split[piece * rows * in + r * in + i] = round16(what pieces 0..piece-1 left of x[r, i]).
template <typename T>
__global__ void SplitActivationsKernel(const float* __restrict__ x, int64_t x_stride, int rows,
                                       int in_features, T* __restrict__ split) {
  const int64_t count = static_cast<int64_t>(rows) * in_features;
  for (int64_t index = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = index / in_features;
    const int i = static_cast<int>(index % in_features);
    float left = x[row * x_stride + i];
#pragma unroll
    for (int piece = 0; piece < kPieces<T>; ++piece) {
      const T rounded = Narrow<T>(left);
      split[piece * count + index] = rounded;
      left -= Widen(rounded);
    }
  }
}

// y[r, o] = the pieces' partial[piece, r, o] summed + bias[o] (+ y[r, o]).
template <int kPieceCount>
__global__ void CombinePiecesKernel(const float* __restrict__ partial, int rows, int out_features,
                                    const float* __restrict__ bias, bool accumulate,
                                    float* __restrict__ y, int64_t y_stride) {
  const int64_t count = static_cast<int64_t>(rows) * out_features;
  for (int64_t index = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = index / out_features;
    const int o = static_cast<int>(index % out_features);
    float value = partial[index];
#pragma unroll
    for (int piece = 1; piece < kPieceCount; ++piece) value += partial[piece * count + index];
    if (bias != nullptr) value += bias[o];
    float* target = y + row * y_stride + o;
    if (accumulate) value += *target;
    *target = value;
  }
}

void LinearF32(const LinearParams& p, cudaStream_t stream) {
  const cublasHandle_t handle = cuda::CublasHandleOn(stream);
  const float alpha = 1.0f;
  const float beta = p.accumulate ? 1.0f : 0.0f;
  SLOTSERVE_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, p.out_features, p.rows,
                                      p.in_features, &alpha, p.weight, CUDA_R_32F, p.in_features,
                                      p.x, CUDA_R_32F, p.x_stride, &beta, p.y, CUDA_R_32F,
                                      p.y_stride, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  if (p.bias != nullptr) {
    const int64_t count = static_cast<int64_t>(p.rows) * p.out_features;
    AddBiasKernel<<<cuda::ElementwiseBlocks(count), cuda::kElementwiseThreads, 0, stream>>>(
        p.y, p.y_stride, p.bias, p.rows, p.out_features);
    SLOTSERVE_CUDA_CHECK_LAUNCH();
  }
}

template <typename T>
void Linear16(const LinearParams& p, cudaDataType_t weight_type, cudaStream_t stream) {
  constexpr int pieces = kPieces<T>;
  const std::size_t bytes_per_row =
      pieces * sizeof(T) * static_cast<std::size_t>(p.in_features) +
      pieces * sizeof(float) * static_cast<std::size_t>(p.out_features);
  const int chunk_rows = static_cast<int>(std::clamp<std::size_t>(
      kMaxScratchBytes / bytes_per_row, 1, static_cast<std::size_t>(p.rows)));
  const std::size_t split_bytes =
      (pieces * sizeof(T) * static_cast<std::size_t>(chunk_rows) * p.in_features + 255) / 256 * 256;
  char* scratch = static_cast<char*>(cuda::StreamScratch(
      stream, split_bytes +
                  pieces * sizeof(float) * static_cast<std::size_t>(chunk_rows) * p.out_features));
  T* split = reinterpret_cast<T*>(scratch);
  float* partial = reinterpret_cast<float*>(scratch + split_bytes);
  const cublasHandle_t handle = cuda::CublasHandleOn(stream);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  for (int first = 0; first < p.rows; first += chunk_rows) {
    const int rows = std::min(chunk_rows, p.rows - first);
    const int64_t inputs = static_cast<int64_t>(rows) * p.in_features;
    SplitActivationsKernel<T>
        <<<cuda::ElementwiseBlocks(inputs), cuda::kElementwiseThreads, 0, stream>>>(
            p.x + first * p.x_stride, p.x_stride, rows, p.in_features, split);
    SLOTSERVE_CUDA_CHECK_LAUNCH();
    SLOTSERVE_CUBLAS_CHECK(cublasGemmEx(
        handle, CUBLAS_OP_T, CUBLAS_OP_N, p.out_features, pieces * rows, p.in_features, &alpha,
        p.weight, weight_type, p.in_features, split, weight_type, p.in_features, &beta, partial,
        CUDA_R_32F, p.out_features, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    const int64_t outputs = static_cast<int64_t>(rows) * p.out_features;
    CombinePiecesKernel<pieces>
        <<<cuda::ElementwiseBlocks(outputs), cuda::kElementwiseThreads, 0, stream>>>(
            partial, rows, p.out_features, p.bias, p.accumulate, p.y + first * p.y_stride,
            p.y_stride);
    SLOTSERVE_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

template <>
void LaunchLinear<Backend::kCuda>(const LinearParams& p, Stream stream) {
  if (p.rows == 0 || p.out_features == 0) return;
  const cudaStream_t s = cuda::AsCudaStream(stream);
  switch (p.weight_dtype) {
    case DType::kF32:
      return LinearF32(p, s);
    case DType::kF16:
      if (cuda::NarrowGemvApplies(p)) return cuda::LaunchNarrowGemv(p, s);
      return Linear16<__half>(p, CUDA_R_16F, s);
    case DType::kBF16:
      if (cuda::NarrowGemvApplies(p)) return cuda::LaunchNarrowGemv(p, s);
      return Linear16<__nv_bfloat16>(p, CUDA_R_16BF, s);
    case DType::kI8:
      return cuda::LinearInt8(p, s);
  }
}

}  // namespace slotserve::kernels
