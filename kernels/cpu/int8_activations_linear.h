// The cpu linear op with int8 activations (LinearParams::int8_activations, I8 weights), by
// one of three kernels that compute the same product (int8_activation_blocks.h) up to the
// order of float additions:
//   - the packed GEMM (int8_packed_gemm.h): int8 x int8 over the weights' packed copy
//     (kernels/int8_packed_weights.h), at every batch size, wherever the loader made that copy
//     (AVX-512 VNNI, int8 activations on at load). On the Zen 4 host it decoded ×1.4-2.8 the
//     kernels below at batch 1-64 (bench/results/int8_packed_gemm.md);
//   - int8 x int8 over the row-major weights (int8_dot_linear.h): each row quantised, each
//     weight block dotted with each row's block in integers;
//   - rounded rows: each row quantised the same way and turned back into floats, q_x * d per
//     block, then multiplied as floats by narrow_weight_linear.h: its widening GEMV, which reads
//     each weight once for a block of up to eight rows, or past the GEMV's bound its widened
//     tiles.
// Without a packed copy (an AVX2 CPU, or a LinearParams made without one), which of the other
// two runs follows what decode measured on the bench machines (docs/INT8.md):
//   - more rows than the fused GEMV takes (narrow_weight_linear.h: 16, or 24 on AVX-512), on
//     every CPU: rounded rows. There the widened tiles are a register-tiled GEMM, while the int8
//     x int8 row kernels stay GEMVs over blocks of at most eight rows that read every weight
//     again for each block (bench/results/int8_routing.md);
//   - up to that, AVX2 only: int8 x int8;
//   - AVX-512 without VNNI: int8 x int8 for one row, rounded rows from two;
//   - AVX-512 VNNI: int8 x int8 on 256-bit registers for one row, rounded rows for 2-7 rows,
//     and from kInt8WideMinRows rows int8 x int8 on 512-bit registers (int8_dot_wide.inc).
#pragma once

#include "kernels/linear.h"

namespace slotserve::kernels::cpu {

// The most rows that take int8 x int8 on 256-bit registers on a CPU with AVX-512.
inline constexpr int kInt8DotMaxRowsAvx512 = 1;
// The fewest rows that take the 512-bit int8 x int8 kernels (AVX-512 VNNI).
inline constexpr int kInt8WideMinRows = 8;

// y = x W^T (+ y when accumulating) + bias, with x rounded to int8 blocks.
void Int8ActivationsLinear(const LinearParams& p);

// The rounded-rows kernel alone (tests).
void RoundedRowsLinear(const LinearParams& p);

}  // namespace slotserve::kernels::cpu
