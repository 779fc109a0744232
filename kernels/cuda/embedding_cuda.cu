// CUDA embedding lookup: one block per token row, threads across the embedding dimension;
// F16/BF16 tables are widened exactly to float before the scale; I8 rows are also multiplied by
// their row scale.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/launch_shape.cuh"
#include "kernels/cuda/widen.cuh"
#include "kernels/embedding.h"

namespace slotserve::kernels {
namespace {

using cuda::Widen;

template <typename T>
__global__ void EmbeddingKernel(const T* __restrict__ table, int dim,
                                const int32_t* __restrict__ tokens, float scale,
                                const float* __restrict__ row_scales, float* __restrict__ out,
                                int64_t out_stride) {
  const int row = blockIdx.x;
  const T* source = table + static_cast<int64_t>(tokens[row]) * dim;
  if (row_scales != nullptr) scale *= row_scales[tokens[row]];
  float* target = out + row * out_stride;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) target[c] = scale * Widen(source[c]);
}

template <typename T>
void Launch(const EmbeddingParams& p, cudaStream_t stream) {
  EmbeddingKernel<T><<<p.rows, cuda::kElementwiseThreads, 0, stream>>>(
      static_cast<const T*>(p.table), p.dim, p.tokens, p.scale,
      p.table_dtype == DType::kI8 ? p.table_scale : nullptr, p.out, p.out_stride);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <>
void LaunchEmbedding<Backend::kCuda>(const EmbeddingParams& p, Stream stream) {
  if (p.rows == 0 || p.dim == 0) return;
  const cudaStream_t s = cuda::AsCudaStream(stream);
  switch (p.table_dtype) {
    case DType::kF32:
      return Launch<float>(p, s);
    case DType::kF16:
      return Launch<__half>(p, s);
    case DType::kBF16:
      return Launch<__nv_bfloat16>(p, s);
    case DType::kI8:
      return Launch<int8_t>(p, s);
  }
}

}  // namespace slotserve::kernels
