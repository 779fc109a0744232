// The cpu linear op with int8 activations (LinearParams::int8_activations, I8 weights), by
// either of two kernels that compute the same product (int8_activation_blocks.h) up to the
// order of float additions:
//   - int8 x int8 (int8_dot_linear.h): each row quantised, each weight block dotted with each
//     row's block in integers;
//   - rounded rows: each row quantised the same way and turned back into floats, q_x * d per
//     block, then multiplied by the widening GEMV (narrow_weight_linear.h), which reads each
//     weight once for a block of up to eight rows.
// Where the widening GEMV runs on AVX-512 registers it was the faster from two rows on (the
// bench machine's decode, docs/INT8.md), so only a single row takes int8 x int8 there; on AVX2
// every batch keeps int8 x int8, as measured when it was written.
#pragma once

#include "kernels/linear.h"

namespace slotserve::kernels::cpu {

// The most rows that take int8 x int8 on a CPU with AVX-512.
inline constexpr int kInt8DotMaxRowsAvx512 = 1;

// y = x W^T (+ y when accumulating) with x rounded to int8 blocks; the bias is the caller's.
void Int8ActivationsLinear(const LinearParams& p);

// The rounded-rows kernel alone (tests).
void RoundedRowsLinear(const LinearParams& p);

}  // namespace slotserve::kernels::cpu
