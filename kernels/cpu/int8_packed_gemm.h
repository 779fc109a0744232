// The cpu linear op with int8 activations over the packed copy of its I8 weights
// (kernels/int8_packed_weights.h): a register-tiled int8 x int8 GEMM on AVX-512 VNNI. The input
// rows are quantised per block of 32 as every int8-activation kernel quantises them
// (int8_quantised_rows.h); a tile of 4 input rows by 3 groups of 16 outputs keeps its 12 block
// sums in int32 registers, each fed by eight vpdpbusd per block of 32 (the weights'
// 64 bytes of a quad against a quad of the row broadcast to every lane), and only then turns
// them into floats: one convert and one multiply-add per 512 products, where the row kernels
// (int8_dot_wide.inc) spend one of each per 64 and the rounded rows' fp32 tiles one
// multiply-add per 16. Results equal the other kernels' up to the order of float additions.
#pragma once

#include "kernels/linear.h"

namespace slotserve::kernels::cpu {

// y = x W^T (+ y when accumulating) + bias for I8 weights with int8 activations, read from
// p.int8_packed_weight (which must be set) with p.weight_scale. Only where CpuHasAvx512Vnni().
void Int8PackedGemm(const LinearParams& p);

}  // namespace slotserve::kernels::cpu
