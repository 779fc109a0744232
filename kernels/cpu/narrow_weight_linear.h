// The cpu linear op over narrow weights kept narrow in memory: F16 and BF16 (16-bit) and I8
// (int8 with one F32 scale per output row). The weights are widened to F32 in registers as they
// are read, so a decode step streams half (16-bit) or a quarter (int8) of the bytes of an F32
// model; products and sums stay F32, and an int8 row's scale multiplies its finished dot
// product (sum_i q_i x_i) * s, so the weights are never rounded again. F32 weights take the
// same kernels (linear.cc sends them up to 128 rows): the fused GEMV's reuse of each weight row
// across input rows, and tiles read in place, beat OpenBLAS's per-row sgemv and packing sgemm.
//
//   - Up to kFusedRows rows (decode batches; kFusedRowsAvx512 on AVX-512): a fused dequantising
//     GEMV. Each weight row is loaded and widened once per block of up to eight input rows
//     (F16C's vcvtph2ps, BF16's shift by 16, int8's vpmovsxbd + vcvtdq2ps) and multiplied into
//     one FMA accumulator per input row; blocks of fewer rows take two or four weight rows side
//     by side, so that a batch of one still keeps several FMA chains in flight. The loop runs on
//     AVX2 registers, or on AVX-512 ones where the CPU has AVX-512 F, VL and BW (picked at run
//     time).
//   - More rows (prefill, large batches): the weight matrix is widened (and scaled) tile by
//     tile into a per-thread F32 buffer, so the widening is paid once per tile for all rows, and
//     each tile is multiplied by the inputs through transposed_input_gemm.h (the inputs
//     transposed once per call, the tile read as it is, on AVX-512 or AVX2 registers; until
//     2026-11-26 AVX2 CPUs handed the tile to OpenBLAS's sgemm, which packed it on every call).
// The library is built for x86-64-v3 (AVX2, FMA, F16C; kernels/CMakeLists.txt), which every
// path here assumes.
#pragma once

#include "kernels/cpu/cpu_features.h"
#include "kernels/linear.h"

namespace slotserve::kernels::cpu {

// Rows up to which the fused GEMV beats widened tiles (measured on the bundled models' shapes:
// docs/CPU_SPEED_LOG.md), on AVX2 and on AVX-512 registers (tiles through
// transposed_input_gemm.h). AVX-512 takes rows 16 at a time: from 25 rows it wins by 6-26%, at
// 24 the fused GEMV's three 8-row blocks are 5% (1 thread) to 10% (2 threads) faster. On AVX2
// a fused bound of 24 made 17-24 rows ×0.76-0.84 slower (bench/results/transposed_gemm_avx2.md).
inline constexpr int kFusedRows = 16;
inline constexpr int kFusedRowsAvx512 = 24;

enum class NarrowGemvIsa { kAvx2, kAvx512 };

// The best of the two on this CPU.
NarrowGemvIsa BestNarrowGemvIsa();

// The most rows the fused GEMV takes on `isa`; more rows go through the widened tiles.
constexpr int FusedMaxRows(NarrowGemvIsa isa) {
  return isa == NarrowGemvIsa::kAvx512 ? kFusedRowsAvx512 : kFusedRows;
}

// y = x W^T (+ y when accumulating) + bias (when p.bias is set). p.weight_dtype is F16, BF16 or
// I8 (then p.weight_scale holds the rows' scales), or F32: linear.cc sends F32 weights here up
// to 128 rows (its kMaxRowsOwnF32Kernels; the "widening" is a plain load and the tiles are read
// in place), and OpenBLAS's sgemm takes more.
void NarrowWeightLinear(const LinearParams& p);
// The same with the fused GEMV's instruction set chosen (kAvx512 only where CpuHasAvx512(),
// cpu_features.h).
void NarrowWeightLinear(const LinearParams& p, NarrowGemvIsa isa);

}  // namespace slotserve::kernels::cpu
