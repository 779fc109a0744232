// Small-batch linear over F16/BF16 weights: y[r, o] = act(sum_i W[o, i] n(x)[r, i] + b[o]
// (+ y[r, o])), where n is the identity or a fused layer norm and act the identity or a fused
// activation (NarrowGemvFusion).
//
// For one or two rows cuBLAS's tensor-core GEMM (linear_cuda.cu) is slower than reading the
// weights once, and it needs x split into 16-bit pieces. Here each weight is widened exactly
// and multiplied in fp32, as the cpu backend does.
//
// A block of kWarps warps owns kOutputs consecutive outputs; its warps split the inputs, each
// lane taking 8 consecutive inputs (one 16-byte load per output row) per pass, so every weight
// byte is read once, coalesced, with kOutputs loads in flight per lane. The first pass's loads
// are issued before the kernel waits for the one that wrote x (programmatic_launch.cuh), so they
// overlap its tail and this launch. Each lane reuses the 8 inputs of every row for the kOutputs
// outputs. Partial sums meet in shared memory in a fixed order, so the result does not depend
// on timing.
//
// A fused layer norm needs the row's mean and variance before the first product. With at most
// kPassInputs inputs a row is covered by one pass, so each lane already holds its inputs in
// registers: two block sums (the mean, then the centred squares, as the layer norm kernel
// computes them) and no extra reads.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/activation_functions.cuh"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/narrow_weight_gemv.cuh"
#include "kernels/cuda/programmatic_launch.cuh"
#include "kernels/cuda/reductions.cuh"
#include "kernels/cuda/widen.cuh"

namespace slotserve::kernels::cuda {
namespace {

constexpr int kWarps = 8;
constexpr int kInputsPerLoad = 8;  // 16 bytes of 16-bit weights
constexpr int kPassInputs = kWarps * 32 * kInputsPerLoad;
static_assert(kPassInputs == kNarrowGemvMaxNormWidth);

// Outputs per block. Measured on an H200 (2048-wide ABC, F16, batch 1 and 2; a 256-wide one;
// bench/results/gpu_third_run.md): one row gains from 8 (each lane's inputs reused for more
// outputs: 0.84 against 0.91 ms a step at batch 1), two rows lose with 8 (0.94 against 0.90 ms
// at batch 2).
template <int kRows>
constexpr int kOutputs = kRows == 1 ? 8 : 4;

// What the kernel does around the product: nothing, or apply one activation.
enum class Epilogue { kNone, kGelu, kRelu };

template <Epilogue kEpilogue>
__device__ __forceinline__ float Finish(float value) {
  if constexpr (kEpilogue == Epilogue::kGelu) return Activate<Activation::kGelu>(value);
  if constexpr (kEpilogue == Epilogue::kRelu) return Activate<Activation::kRelu>(value);
  return value;
}

// The 8 weights at input i of each of the block's output rows (nothing at or past in_features).
template <typename T, int kCount>
__device__ __forceinline__ void LoadWeights(const T* const (&rows)[kCount], int i, int in_features,
                                            uint4 (&packed)[kCount]) {
  if (i >= in_features) return;
#pragma unroll
  for (int j = 0; j < kCount; ++j) packed[j] = __ldg(reinterpret_cast<const uint4*>(rows[j] + i));
}

// The 8 inputs of each row at input i. x was written by a kernel that may still have been
// running when this one started (it is read only after the wait): a plain cached load, which
// the wait makes see that kernel's writes, not the read-only path, which assumes x never
// changes while this kernel runs.
template <int kRows>
__device__ __forceinline__ void LoadInputs(const float* x, int64_t x_stride, int i,
                                           float (&inputs)[kRows][kInputsPerLoad]) {
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float4* source = reinterpret_cast<const float4*>(x + r * x_stride + i);
    const float4 a = __ldca(source);
    const float4 b = __ldca(source + 1);
    inputs[r][0] = a.x, inputs[r][1] = a.y, inputs[r][2] = a.z, inputs[r][3] = a.w;
    inputs[r][4] = b.x, inputs[r][5] = b.y, inputs[r][6] = b.z, inputs[r][7] = b.w;
  }
}

template <typename T, int kRows, int kCount>
__device__ __forceinline__ void MultiplyAdd(const uint4 (&packed)[kCount],
                                            const float (&inputs)[kRows][kInputsPerLoad],
                                            float (&sums)[kCount][kRows]) {
#pragma unroll
  for (int j = 0; j < kCount; ++j) {
    float w[kInputsPerLoad];
    Widen8<T>(packed[j], w);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int k = 0; k < kInputsPerLoad; ++k) sums[j][r] = fmaf(w[k], inputs[r][k], sums[j][r]);
    }
  }
}

// Layer norm of each row's inputs in place, the lane holding inputs [i, i + 8) of the whole
// row (one pass): (v - mean) / sqrt(var + eps) * gamma + beta, as layer_norm_cuda.cu.
template <int kRows>
__device__ __forceinline__ void NormaliseInputs(const NarrowGemvFusion& fusion, int i,
                                                int in_features,
                                                float (&inputs)[kRows][kInputsPerLoad]) {
  __shared__ float scratch[kWarpSize];
  const bool mine = i < in_features;
  float gamma[kInputsPerLoad] = {}, beta[kInputsPerLoad] = {};
  if (mine) {
#pragma unroll
    for (int k = 0; k < kInputsPerLoad; ++k) gamma[k] = fusion.norm_gamma[i + k];
#pragma unroll
    for (int k = 0; k < kInputsPerLoad; ++k) beta[k] = fusion.norm_beta[i + k];
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < kInputsPerLoad; ++k) sum += mine ? inputs[r][k] : 0.0f;
    const float mean = BlockSum(sum, scratch) / in_features;
    float squares = 0.0f;
#pragma unroll
    for (int k = 0; k < kInputsPerLoad; ++k) {
      const float centred = inputs[r][k] - mean;
      squares += mine ? centred * centred : 0.0f;
    }
    const float inv_std = rsqrtf(BlockSum(squares, scratch) / in_features + fusion.norm_eps);
#pragma unroll
    for (int k = 0; k < kInputsPerLoad; ++k) {
      inputs[r][k] = (inputs[r][k] - mean) * inv_std * gamma[k] + beta[k];
    }
  }
}

template <typename T, int kRows, bool kNorm, Epilogue kEpilogue>
__global__ void __launch_bounds__(kWarps * 32)
    NarrowGemvKernel(const T* __restrict__ weight, int in_features, int out_features,
                     const float* x, int64_t x_stride, const float* __restrict__ bias,
                     bool accumulate, float* y, int64_t y_stride, NarrowGemvFusion fusion) {
  constexpr int kCount = kOutputs<kRows>;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int first_output = blockIdx.x * kCount;
  float sums[kCount][kRows] = {};
  const T* rows[kCount];
#pragma unroll
  for (int j = 0; j < kCount; ++j) {
    // Outputs past the end re-read the last row; their sums are never written.
    const int o = min(first_output + j, out_features - 1);
    rows[j] = weight + static_cast<int64_t>(o) * in_features;
  }
  int i = (warp * 32 + lane) * kInputsPerLoad;
  uint4 packed[kCount];
  LoadWeights<T, kCount>(rows, i, in_features, packed);
  AllowDependentLaunch();
  WaitForPrecedingKernel();
  if constexpr (kNorm) {
    // One pass covers the row (NarrowGemvApplies: in_features <= kNarrowGemvMaxNormWidth).
    float inputs[kRows][kInputsPerLoad] = {};
    if (i < in_features) LoadInputs<kRows>(x, x_stride, i, inputs);
    NormaliseInputs<kRows>(fusion, i, in_features, inputs);
    if (i < in_features) MultiplyAdd<T, kRows, kCount>(packed, inputs, sums);
  } else {
    for (; i < in_features; i += kPassInputs) {
      float inputs[kRows][kInputsPerLoad];
      LoadInputs<kRows>(x, x_stride, i, inputs);
      MultiplyAdd<T, kRows, kCount>(packed, inputs, sums);
      LoadWeights<T, kCount>(rows, i + kPassInputs, in_features, packed);
    }
  }
  // Warp sums, then the block's warps in order.
  __shared__ float warp_sums[kWarps][kCount * kRows];
#pragma unroll
  for (int j = 0; j < kCount; ++j) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      float value = sums[j][r];
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) {
        value += __shfl_xor_sync(0xffffffffu, value, offset);
      }
      if (lane == 0) warp_sums[warp][j * kRows + r] = value;
    }
  }
  __syncthreads();
  for (int index = threadIdx.x; index < kCount * kRows; index += blockDim.x) {
    const int j = index / kRows;
    const int r = index % kRows;
    const int o = first_output + j;
    if (o >= out_features) continue;
    float value = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) value += warp_sums[w][index];
    if (bias != nullptr) value += bias[o];
    float* target = y + r * y_stride + o;
    if (accumulate) value += *target;
    *target = Finish<kEpilogue>(value);
  }
}

template <typename T, int kRows, bool kNorm, Epilogue kEpilogue>
void Launch(const LinearParams& p, const NarrowGemvFusion& fusion, cudaStream_t stream) {
  constexpr int kCount = kOutputs<kRows>;
  const int blocks = (p.out_features + kCount - 1) / kCount;
  LaunchOverlappingPreceding(NarrowGemvKernel<T, kRows, kNorm, kEpilogue>, dim3(blocks),
                             dim3(kWarps * 32), 0, stream, static_cast<const T*>(p.weight),
                             p.in_features, p.out_features, p.x, p.x_stride, p.bias, p.accumulate,
                             p.y, p.y_stride, fusion);
}

template <typename T, int kRows, bool kNorm>
void LaunchEpilogue(const LinearParams& p, const NarrowGemvFusion& fusion, cudaStream_t stream) {
  if (!fusion.activate) return Launch<T, kRows, kNorm, Epilogue::kNone>(p, fusion, stream);
  if (fusion.activation == Activation::kGelu) {
    return Launch<T, kRows, kNorm, Epilogue::kGelu>(p, fusion, stream);
  }
  return Launch<T, kRows, kNorm, Epilogue::kRelu>(p, fusion, stream);
}

template <typename T, int kRows>
void LaunchNorm(const LinearParams& p, const NarrowGemvFusion& fusion, cudaStream_t stream) {
  if (fusion.norm_gamma != nullptr) return LaunchEpilogue<T, kRows, true>(p, fusion, stream);
  return LaunchEpilogue<T, kRows, false>(p, fusion, stream);
}

template <typename T>
void LaunchRows(const LinearParams& p, const NarrowGemvFusion& fusion, cudaStream_t stream) {
  static_assert(kNarrowGemvMaxRows == 2 && kNarrowGemvMaxFusedRows == 1,
                "one instance per row count, fused ones at 1 row");
  if (p.rows == 1) return LaunchNorm<T, 1>(p, fusion, stream);
  return Launch<T, 2, false, Epilogue::kNone>(p, fusion, stream);
}

}  // namespace

bool NarrowGemvApplies(const LinearParams& p, const NarrowGemvFusion& fusion) {
  const bool narrow = p.weight_dtype == DType::kF16 || p.weight_dtype == DType::kBF16;
  const auto aligned = [](const void* pointer) {
    return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0;
  };
  const bool norm_fits = fusion.norm_gamma == nullptr ||
                         (p.in_features > 0 && p.in_features <= kNarrowGemvMaxNormWidth);
  const int max_rows = fusion.any() ? kNarrowGemvMaxFusedRows : kNarrowGemvMaxRows;
  return narrow && norm_fits && p.rows >= 1 && p.rows <= max_rows &&
         p.in_features % kInputsPerLoad == 0 && p.x_stride % 4 == 0 && aligned(p.x) &&
         aligned(p.weight);
}

void LaunchNarrowGemv(const LinearParams& p, cudaStream_t stream, const NarrowGemvFusion& fusion) {
  if (p.weight_dtype == DType::kF16) return LaunchRows<__half>(p, fusion, stream);
  return LaunchRows<__nv_bfloat16>(p, fusion, stream);
}

}  // namespace slotserve::kernels::cuda
