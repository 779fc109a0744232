// The cpu linear op over narrow weights kept narrow in memory: F16 and BF16 (16-bit) and I8
// (int8 with one F32 scale per output row). The weights are widened to F32 in registers as they
// are read, so a decode step streams half (16-bit) or a quarter (int8) of the bytes of an F32
// model; products and sums stay F32, and an int8 row's scale multiplies its finished dot
// product (sum_i q_i x_i) * s, so the weights are never rounded again.
//
//   - Up to kFusedRows rows (decode batches): a fused dequantising GEMV. Each weight row is
//     loaded and widened once per block of up to eight input rows (F16C's vcvtph2ps, BF16's
//     shift by 16, int8's vpmovsxbd + vcvtdq2ps) and multiplied into one AVX2 FMA accumulator
//     per input row; blocks of fewer rows take two or four weight rows side by side, so that a
//     batch of one still keeps several FMA chains in flight.
//   - More rows (prefill, large batches): the weight matrix is widened (and scaled) tile by
//     tile into a per-thread F32 buffer and each tile goes through OpenBLAS sgemm, so the
//     widening is paid once per tile for all rows.
// The library is built for x86-64-v3 (AVX2, FMA, F16C; kernels/CMakeLists.txt), which every
// path here assumes.
#pragma once

#include "kernels/linear.h"

namespace slotserve::kernels::cpu {

inline constexpr int kFusedRows = 16;

// y = x W^T (+ y when accumulating); the bias is the caller's. p.weight_dtype is F16, BF16 or
// I8 (then p.weight_scale holds the rows' scales).
void NarrowWeightLinear(const LinearParams& p);

}  // namespace slotserve::kernels::cpu
