// The CUDA linear op for a few rows over 16-bit weights (narrow_weight_gemv_cuda.cu): decode
// batches, where the step is bound by reading the weights once. linear_cuda.cu sends F16/BF16
// calls here when NarrowGemvApplies and uses its split-activation GEMM otherwise.
#pragma once

#include <cuda_runtime.h>

#include "kernels/linear.h"

namespace slotserve::kernels::cuda {

// Rows up to which the GEMV beats the split-activation GEMM. Measured on an H200 (ABC, 16
// layers of d_model 2048, F16): x1.19 at 1 row, x1.06 at 2, but x0.86 at 4 and x0.76 at 8,
// where every block re-reading all rows of x from L2 costs more than the GEMM's extra work.
constexpr int kNarrowGemvMaxRows = 2;

// True when the GEMV takes this call: F16/BF16 weights, rows <= kNarrowGemvMaxRows, and the
// 16-byte loads it makes are aligned (in_features a multiple of 8, x rows on 16 bytes).
bool NarrowGemvApplies(const LinearParams& p);

// y = x W^T + b (+ y) with each weight widened exactly to fp32 and fp32 sums, as the cpu backend
// computes it. Requires NarrowGemvApplies(p).
void LaunchNarrowGemv(const LinearParams& p, cudaStream_t stream);

}  // namespace slotserve::kernels::cuda
