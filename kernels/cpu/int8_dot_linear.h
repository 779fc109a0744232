// The cpu linear op with int8 activations (LinearParams::int8_activations, I8 weights): the
// input rows are quantised per block of 32 (int8_activation_blocks.h) and multiplied int8 by
// int8 into int32, so a weight byte costs a fraction of an instruction instead of the
// widening GEMV's convert and multiply-add per value (narrow_weight_linear.h).
//
// Two instruction sets, picked at run time: AVX-512 VNNI's vpdpbusd (u8 x s8 -> s32, four
// products summed per lane in one instruction, on 256-bit registers) where the CPU has it, else
// AVX2's vpmaddubsw + vpmaddwd. Both take an unsigned and a signed operand, so the activations
// go in as |q_x| and the weights as sign(q_x) * q_w (vpsignb; the 512-bit kernels use q_x + 128
// instead); a weight of -128 would not survive that negation, which is why the format keeps int8
// weights in [-127, 127] and the loader refuses -128 (models/finite_weights.cc).
#pragma once

#include "kernels/cpu/cpu_features.h"
#include "kernels/linear.h"

namespace slotserve::kernels::cpu {

// kAvx512VnniWide: 512-bit registers, two blocks per instruction (int8_dot_wide.inc).
enum class Int8DotIsa { kAvx2, kAvx512Vnni, kAvx512VnniWide };

// The best of the two on this CPU.
Int8DotIsa BestInt8DotIsa();

// y = x W^T (+ y when accumulating) + bias for p.weight_dtype I8 with int8 activations. `isa`
// must run on this CPU (kAvx512Vnni* only where CpuHasAvx512Vnni()).
void Int8DotLinear(const LinearParams& p, Int8DotIsa isa);

}  // namespace slotserve::kernels::cpu
