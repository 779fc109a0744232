// The cpu linear op with int8 activations (LinearParams::int8_activations, I8 weights), by
// either of two kernels that compute the same product (int8_activation_blocks.h) up to the
// order of float additions:
//   - int8 x int8 (int8_dot_linear.h): each row quantised, each weight block dotted with each
//     row's block in integers;
//   - rounded rows: each row quantised the same way and turned back into floats, q_x * d per
//     block, then multiplied by the widening GEMV (narrow_weight_linear.h), which reads each
//     weight once for a block of up to eight rows.
// Which one runs follows what decode measured on the bench machines (docs/INT8.md):
//   - AVX2 only: int8 x int8 for every batch;
//   - AVX-512 without VNNI: int8 x int8 for one row, rounded rows from two;
//   - AVX-512 VNNI: int8 x int8 on 256-bit registers for one row, rounded rows for 2-7 rows,
//     and from kInt8WideMinRows rows int8 x int8 on 512-bit registers (int8_dot_wide.inc),
//     ×1.08-1.15 the rounded rows at 8-32 rows.
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
