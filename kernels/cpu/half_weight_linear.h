// The cpu linear op over 16-bit weights (F16 or BF16), kept 16-bit in memory: the weights are
// widened to F32 in registers as they are read, so a decode step streams half the bytes of an
// F32 model (DESIGN §3's math unchanged: products and sums in F32).
//
//   - Up to kFusedRows rows (decode batches): a fused dequantising GEMV. Each weight row is
//     loaded and widened once per block of four input rows (F16C's vcvtph2ps, or BF16's shift
//     by 16) and multiplied into four AVX2 FMA accumulators.
//   - More rows (prefill, large batches): the weight matrix is widened tile by tile into a
//     per-thread F32 buffer and each tile goes through OpenBLAS sgemm, so the widening is paid
//     once per tile for all rows.
// The library is built for x86-64-v3 (AVX2, FMA, F16C; kernels/CMakeLists.txt), which every
// path here assumes.
#pragma once

#include "kernels/linear.h"

namespace slotserve::kernels::cpu {

inline constexpr int kFusedRows = 16;

// y = x W^T (+ y when accumulating); the bias is the caller's. p.weight_dtype is F16 or BF16.
void HalfWeightLinear(const LinearParams& p);

}  // namespace slotserve::kernels::cpu
